import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { open, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { findJsonErrorOffset } from '../../src/cli/json-error-offset.js';
import { run } from '../../src/cli/run.js';
import type { Message } from '../../src/index.js';
import { captureIo } from '../support/capture-io.js';
import { CLI_MAIN, unansweredCall, useTemporaryDirectory } from './helpers.js';

const broken = unansweredCall;
const MAIN = CLI_MAIN;
const { path } = useTemporaryDirectory('unstuck-bad-input-');

/** One line on stderr, exit 2, no stack trace. */
async function refused(args: string[], pattern: RegExp, env: Record<string, string> = {}): Promise<void> {
  const io = captureIo({ env });
  assert.equal(await run(args, io), 2, io.err());
  assert.match(io.err(), pattern);
  assert.equal(io.err().trim().split('\n').length, 1, io.err());
  assert.doesNotMatch(io.err(), /\n\s+at /);
}

describe('input the CLI refuses, in one line', () => {
  test('100,000-deep JSON that does not parse: file, line and column (the scanner does not recurse)', async () => {
    const depth = 100_000;
    await writeFile(path('deep.json'), `${'['.repeat(depth)}${']'.repeat(depth - 1)}`);
    await refused(['check', path('deep.json')], new RegExp(`deep\\.json:1:${2 * depth}: not valid JSON`));
    assert.equal(findJsonErrorOffset(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}x`), 6 * depth + 1);
  });

  test('a history too deep to write back is named with a position, and nothing is written', async () => {
    const depth = 100_000;
    const text = `[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}],"x":${'['.repeat(depth)}${']'.repeat(depth)}}]`;
    await writeFile(path('deep-fix.json'), text);
    await refused(['fix', '--write', path('deep-fix.json')], /deep-fix\.json:1:\d+: nested too deeply to write back/);
    assert.equal(await readFile(path('deep-fix.json'), 'utf8'), text);
  });

  test('bytes that are not UTF-8: refused with their position, never turned into U+FFFD by --write', async () => {
    const bytes = Buffer.concat([
      Buffer.from('[{"role":"user","content":"q"},\n {"role":"user","content":"caf'),
      Buffer.from([0xe9]),
      Buffer.from('"}]'),
    ]);
    await writeFile(path('latin1.json'), bytes);
    await refused(['fix', '--write', path('latin1.json')], /latin1\.json:2:31: not UTF-8: byte 0xe9/);
    assert.ok((await readFile(path('latin1.json'))).equals(bytes));
    await writeFile(path('latin1.jsonl'), bytes.toString('latin1').replace(',\n', '\n'), 'latin1');
    await refused(['check', path('latin1.jsonl')], /latin1\.jsonl:2:31: not UTF-8/);
  });

  test('larger than the limit: "too large" with the limit (a sparse 300 MB file, and a lowered limit)', async () => {
    const handle = await open(path('sparse.json'), 'w');
    await handle.truncate(300 * 1024 * 1024);
    await handle.close();
    await refused(
      ['check', path('sparse.json')],
      /sparse\.json: too large: 314572800 bytes, more than the limit of 268435456 bytes \(256 MiB/,
    );
    await writeFile(path('small.json'), JSON.stringify(broken));
    await refused(
      ['check', path('small.json')],
      /small\.json: too large: \d+ bytes, more than the limit of 100 bytes/,
      { UNSTUCK_MAX_INPUT_BYTES: '100' },
    );
    const stdin = captureIo({ stdin: JSON.stringify(broken), env: { UNSTUCK_MAX_INPUT_BYTES: '100' } });
    assert.equal(await run(['check', '-'], stdin), 2);
    assert.match(stdin.err(), /<stdin>: too large/);
  });

  test('a FIFO is refused at once, not read (a FIFO with no writer used to hang forever)', {
    timeout: 20_000,
  }, async () => {
    execFileSync('mkfifo', [path('pipe.json')]);
    await refused(['check', path('pipe.json')], /pipe\.json: cannot read: not a regular file \(a FIFO\)/);
    await refused(['fix', '--write', path('pipe.json')], /pipe\.json: cannot read: not a regular file \(a FIFO\)/);
    execFileSync('mkfifo', [path('pipe.md')]);
    await refused(['check', path('pipe.md')], /pipe\.md: cannot read: not a regular file \(a FIFO\)/);
    await refused(
      ['convert', path('pipe.md'), path('from-pipe.json')],
      /pipe\.md: cannot read: not a regular file \(a FIFO\)/,
    );
  });

  test('convert IN OUT naming one file (or a link to it) is refused; the input is untouched', async () => {
    const text = JSON.stringify(broken);
    await writeFile(path('same.json'), text);
    await symlink(path('same.json'), path('same-link.json'));
    await refused(['convert', path('same.json'), path('same.json')], /IN and OUT are the same file/);
    await refused(['convert', path('same.json'), path('same-link.json')], /IN and OUT are the same file/);
    assert.equal(await readFile(path('same.json'), 'utf8'), text);
  });

  test('an output in a missing directory names that path, not a temporary or lock file', async () => {
    await writeFile(path('in.json'), JSON.stringify(broken));
    for (const name of ['out.json', 'out.jsonl', 'out.md']) {
      const target = path(join('missing', name));
      const io = captureIo();
      assert.equal(await run(['convert', path('in.json'), target], io), 2);
      assert.equal(io.err(), `unstuck convert: ${target}: cannot write: its directory does not exist (ENOENT)\n`);
    }
    assert.deepEqual(
      (await readdir(path(''))).filter((name) => name.includes('.tmp-')),
      [],
    );
  });
});

/** Runs the real CLI with stdout and stderr as given. */
function spawnCli(args: string[], stdout: 'pipe' | number): ReturnType<typeof spawn> {
  return spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { stdio: ['ignore', stdout, 'pipe'] });
}

function finished(
  child: ReturnType<typeof spawn>,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; err: string }> {
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, err })));
}

describe('the process: output that fails, and signals', () => {
  let large = '';
  before(async () => {
    const messages: Message[] = [];
    for (let index = 0; index < 3000; index += 1)
      messages.push(
        { role: 'user', content: `q${index}` },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: `c${index}`, type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
      );
    large = path('large.json');
    await writeFile(large, JSON.stringify(messages, null, 2));
  });

  test("a reader that goes away (| head -1) ends the output quietly: no stack trace, the command's own exit code", async () => {
    const child = spawnCli(['fix', large], 'pipe');
    child.stdout!.once('data', () => child.stdout!.destroy());
    const result = await finished(child);
    assert.doesNotMatch(result.err, /EPIPE|\n\s+at /);
    assert.equal(result.code, 0);
  });

  test('a full disk (> /dev/full) is one line on stderr and exit 2', async () => {
    const full = await open('/dev/full', 'w');
    try {
      const result = await finished(spawnCli(['check', large, large], full.fd));
      assert.equal(result.code, 2);
      assert.equal(result.err, 'unstuck: cannot write the output: no space left on the device (ENOSPC)\n');
    } finally {
      await full.close();
    }
  });

  test('the first SIGTERM ends check (it used to be swallowed)', async () => {
    // stdin as input: a check that waits for its input until it is stopped.
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'check', '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const ending = finished(child);
    child.kill('SIGTERM');
    // Before the fix the signal was swallowed and check waited for its input for ever.
    const stuck = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const result = await ending;
    clearTimeout(stuck);
    assert.equal(result.signal, 'SIGTERM');
  });
});
