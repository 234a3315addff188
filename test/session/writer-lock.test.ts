import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isUnstuckError } from '../../src/core/errors.js';
import { createJournalStore, createTranscriptStore } from '../../src/session/index.js';
import { bundleChild } from './bundle-child.js';
import { temporaryDirectory, withStore } from './helpers.js';

let bundleDirectory: Awaited<ReturnType<typeof temporaryDirectory>>;
let child: string;

before(async () => {
  bundleDirectory = await temporaryDirectory();
  child = await bundleChild('lock-child.ts', bundleDirectory.path);
});

after(async () => {
  await bundleDirectory.dispose();
});

function runChild(...args: string[]): Promise<{ code: number | null; output: string }> {
  const process_ = spawn(process.execPath, [child, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  process_.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return new Promise((resolve) => process_.on('close', (code) => resolve({ code, output })));
}

/** The pid of a process that has ended. */
async function deadPid(): Promise<number> {
  const process_ = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => process_.on('close', resolve));
  return process_.pid!;
}

describe('the writer lock', () => {
  it('keeps two processes from interleaving: one writes all its lines, then the other', async () => {
    const directory = await temporaryDirectory();
    const path = join(directory.path, 'session.jsonl');
    try {
      const [first, second] = await Promise.all([runChild('hold', path, 'A', '60'), runChild('hold', path, 'B', '60')]);
      assert.equal(first.code, 0);
      assert.equal(second.code, 0);
      const loaded = await createJournalStore(path).load();
      assert.deepEqual(loaded.problems, []);
      const contents = loaded.messages.map((message) => message.content as string);
      assert.equal(contents.length, 120);
      const leader = contents[0]!.charAt(0);
      const follower = leader === 'A' ? 'B' : 'A';
      const expected = [
        ...Array.from({ length: 60 }, (_unused, index) => `${leader} ${index}`),
        ...Array.from({ length: 60 }, (_unused, index) => `${follower} ${index}`),
      ];
      assert.deepEqual(contents, expected);
      // And their times under the lock do not overlap.
      const times = (output: string) =>
        output
          .trim()
          .split('\n')
          .map((line) => Number(line.split(' ')[1]));
      const [leaderRun, followerRun] = leader === 'A' ? [first, second] : [second, first];
      assert.ok(
        times(followerRun.output)[0]! >= times(leaderRun.output)[1]!,
        `${leaderRun.output} / ${followerRun.output}`,
      );
    } finally {
      await directory.dispose();
    }
  });

  it('gives a second process a clear SESSION_LOCKED error after its timeout, and the lock once released', async () => {
    const directory = await temporaryDirectory();
    const path = join(directory.path, 'session.jsonl');
    const holder = createJournalStore(path);
    try {
      await holder.save([{ role: 'user', content: 'first writer' }]);
      const refused = await runChild('try', path, '150');
      assert.equal(refused.code, 3);
      assert.match(
        refused.output,
        new RegExp(`^SESSION_LOCKED: the session is being written by process ${process.pid} on `),
      );
      await holder.close();
      const allowed = await runChild('try', path, '150');
      assert.deepEqual(allowed, { code: 0, output: 'saved\n' });
    } finally {
      await holder.close();
      await directory.dispose();
    }
  });

  it('takes over a lock whose process is gone', async () => {
    await withStore(
      'session.md',
      (path) => createTranscriptStore(path, { lockTimeoutMs: 1000 }),
      async ({ store, path }) => {
        await writeFile(`${path}.lock`, JSON.stringify({ pid: await deadPid(), host: hostname(), since: 'earlier' }));
        await store.save([{ role: 'user', content: 'after a crash' }]);
        assert.equal(JSON.parse(await readFile(`${path}.lock`, 'utf8')).pid, process.pid);
        await store.close();
        await assert.rejects(readFile(`${path}.lock`), { code: 'ENOENT' });
      },
    );
  });

  it('waits for, and never takes, a live lock: in one process, another host, or half-written just now', async () => {
    const directory = await temporaryDirectory();
    const path = join(directory.path, 'session.md');
    const first = createTranscriptStore(path);
    const second = createTranscriptStore(path, { lockTimeoutMs: 100 });
    try {
      await first.save([]);
      await assert.rejects(
        second.save([]),
        (error: unknown) => isUnstuckError(error) && error.code === 'SESSION_LOCKED',
      );
      await first.close();
      await second.save([{ role: 'user', content: 'now mine' }]);
      await second.close();

      await writeFile(`${path}.lock`, JSON.stringify({ pid: await deadPid(), host: 'another-host', since: 'earlier' }));
      await assert.rejects(
        second.save([]),
        (error: unknown) =>
          isUnstuckError(error) && error.code === 'SESSION_LOCKED' && error.message.includes('another-host'),
      );

      await writeFile(`${path}.lock`, '');
      await assert.rejects(
        second.save([]),
        (error: unknown) => isUnstuckError(error) && error.code === 'SESSION_LOCKED',
      );
      // An unreadable lock that stays so for long was left by a writer that died creating it.
      const old = new Date(Date.now() - 60_000);
      await utimes(`${path}.lock`, old, old);
      await second.save([]);
    } finally {
      await first.close();
      await second.close();
      await directory.dispose();
    }
  });
});
