import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { run } from '../../../src/cli/run.js';
import { refuseIfChanged } from '../../../src/cli/sessions/write-guard.js';
import { isUnstuckError } from '../../../src/core/errors.js';
import { captureIo } from '../../support/capture-io.js';
import { useTemporaryDirectory } from '../helpers.js';

const poisoned = fileURLToPath(
  new URL(
    '../../fixtures/agents/claude-code/read-tool-loop.claude-code-2.1.332.text-before-tool-result.jsonl',
    import.meta.url,
  ),
);
const { path } = useTemporaryDirectory('unstuck-write-guard-');

/** A process holding FILE open with FLAGS ('a': for writing, 'r': for reading), until killed. */
async function holdOpen(file: string, flags: 'a' | 'r'): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `require('fs').openSync(${JSON.stringify(file)}, '${flags}'); console.log('open'); setInterval(() => {}, 1000);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await once(child.stdout as NodeJS.ReadableStream, 'data');
  return child;
}

describe('fix --write refuses when the agent may still write the session', {
  skip: !existsSync('/proc/self/fd'),
}, () => {
  test('a process holding the file open for writing: one clear line, nothing written, no .bak', async () => {
    const file = path('held.jsonl');
    const original = await readFile(poisoned, 'utf8');
    await writeFile(file, original);
    const holder = await holdOpen(file, 'a');
    try {
      const io = captureIo();
      assert.equal(await run(['fix', '--write', file], io), 2);
      assert.match(
        io.err(),
        new RegExp(
          `^unstuck fix: .*held\\.jsonl: is open for writing by process ${holder.pid} \\(node\\): not replaced, nothing written; `,
        ),
      );
      assert.equal(io.err().trim().split('\n').length, 1);
      assert.equal(await readFile(file, 'utf8'), original);
      assert.equal(existsSync(`${file}.bak`), false);
    } finally {
      holder.kill();
    }
  });

  test('a process that only reads the file does not stop the repair', async () => {
    const file = path('read-only-holder.jsonl');
    await writeFile(file, await readFile(poisoned, 'utf8'));
    const holder = await holdOpen(file, 'r');
    try {
      const io = captureIo();
      assert.equal(await run(['fix', '--write', file], io), 0, io.err());
      assert.ok(existsSync(`${file}.bak`));
    } finally {
      holder.kill();
    }
  });

  test('a file that changed since it was read is not replaced', async () => {
    const file = path('changed.jsonl');
    await writeFile(file, 'one\n');
    const bytes = await readFile(file);
    await writeFile(file, 'one\ntwo\n');
    await assert.rejects(refuseIfChanged(file, bytes), (error) => {
      assert.ok(isUnstuckError(error));
      assert.match(error.message, /^changed since it was read .*nothing written/);
      return true;
    });
    await refuseIfChanged(file, await readFile(file));
  });
});
