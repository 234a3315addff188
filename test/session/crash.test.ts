import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import type { SessionStore } from '../../src/session/index.js';
import { createJournalStore, createTranscriptStore } from '../../src/session/index.js';
import { seededRandom } from '../support/random.js';
import { bundleChild } from './bundle-child.js';
import { journalLine, sessionVersion } from './crash-versions.js';
import { asJson, temporaryDirectory } from './helpers.js';

/**
 * Kills a saving process at random moments, 200+ times in all, and after every kill loads the
 * session: it must be whole, the old save or the new one, never a mix or an unreadable file. The
 * next writer also has to take over the dead one's lock every time.
 */
type Mode = 'transcript' | 'segments' | 'journal-save' | 'journal-append';
const KILLS: Record<Mode, number> = { transcript: 55, segments: 55, 'journal-save': 45, 'journal-append': 50 };

let bundleDirectory: Awaited<ReturnType<typeof temporaryDirectory>>;
let child: string;

before(async () => {
  bundleDirectory = await temporaryDirectory();
  child = await bundleChild('crash-child.ts', bundleDirectory.path);
});

after(async () => {
  await bundleDirectory.dispose();
});

function openStore(mode: Mode, path: string): SessionStore {
  return mode.startsWith('journal')
    ? createJournalStore(path)
    : createTranscriptStore(path, { segmentMessages: mode === 'segments' ? 4 : 1000 });
}

/** Starts a writer at `first`, waits for its first finished save, then kills it after `delayMs`. Returns the last save it reported. */
async function killMidway(mode: Mode, path: string, first: number, delayMs: number, trace: Trace): Promise<number> {
  const process_ = spawn(process.execPath, [child, mode, path, String(first)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let errors = '';
  const closed = new Promise<number | null>((resolve, reject) => {
    process_.on('close', (code) => resolve(code));
    process_.on('error', (error) => reject(new Error(`cannot start the writer: ${error.message}`)));
  });
  const firstSave = new Promise<void>((resolve) => {
    process_.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      resolve();
    });
    process_.on('close', () => resolve());
    process_.on('error', () => resolve());
  });
  process_.stderr.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const started = Date.now();
  await firstSave;
  if (process_.pid === undefined) await closed; // failed to start: `closed` rejects with the reason
  assert.ok(
    Date.now() - started < 20_000,
    `the writer took ${Date.now() - started} ms to its first save: ${errors.slice(0, 800)}`,
  );
  await sleep(delayMs);
  trace.killedAfterMs = Date.now() - started;
  process_.kill('SIGKILL');
  const code = await closed;
  trace.writerOutput = output.slice(-200);
  trace.writerErrors = errors.slice(0, 800);
  assert.equal(code, null, `the writer was killed, not ended: ${errors.slice(0, 800)}`);
  const reported = output
    .split('\n')
    .filter((line) => line !== '')
    .map(Number);
  assert.ok(reported.length > 0, 'the writer finished at least one save before the kill');
  return reported.at(-1)!;
}

/** What a failure report needs to replay and explain a kill. */
interface Trace {
  kill?: number;
  first?: number;
  delayMs?: number;
  killedAfterMs?: number;
  writerOutput?: string;
  writerErrors?: string;
  loaded?: string;
}

async function crashRun(mode: Mode, seed: number): Promise<void> {
  const directory = await temporaryDirectory();
  const path = join(directory.path, mode.startsWith('journal') ? 'session.jsonl' : 'session.md');
  const next = seededRandom(seed);
  const trace: Trace = {};
  try {
    const initial = openStore(mode, path);
    if (mode === 'journal-append') await initial.append!([journalLine(0)]);
    else await initial.save(sessionVersion(0));
    await initial.close();
    let first = 1;
    for (let kill = 0; kill < KILLS[mode]; kill += 1) {
      const delayMs = next() * 12;
      Object.assign(trace, {
        kill,
        first,
        delayMs,
        killedAfterMs: undefined,
        writerOutput: undefined,
        writerErrors: undefined,
        loaded: undefined,
      });
      const reported = await killMidway(mode, path, first, delayMs, trace);
      const loaded = await openStore(mode, path).load();
      trace.loaded = `${loaded.messages.length} messages, problems ${JSON.stringify(loaded.problems).slice(0, 600)}`;
      if (mode === 'journal-append') {
        // Every acknowledged line is there, in order; at most the line in flight is torn.
        const count = loaded.messages.length;
        assert.ok(
          count === reported + 1 || count === reported + 2,
          `kill ${kill}: ${count} lines after acknowledging ${reported}`,
        );
        assert.deepEqual(
          loaded.messages,
          asJson(Array.from({ length: count }, (_unused, index) => journalLine(index))),
          `kill ${kill}`,
        );
        assert.ok(
          loaded.problems.length <= 1 && loaded.problems.every((problem) => /cut short/.test(problem.why)),
          JSON.stringify(loaded.problems),
        );
        first = count;
      } else {
        assert.deepEqual(loaded.problems, [], `kill ${kill}: the session loads without problems`);
        const version = [reported, reported + 1].find((candidate) =>
          isDeepStrictEqual(loaded.messages, asJson(sessionVersion(candidate))),
        );
        assert.ok(version !== undefined, `kill ${kill}: the session is save ${reported} or ${reported + 1}, whole`);
        first = reported + 2;
      }
    }
    // A last writer cleans up whatever the kills left: only the session's own files remain.
    const last = openStore(mode, path);
    if (mode === 'journal-append') await last.append!([journalLine(first)]);
    else await last.save(sessionVersion(first));
    await last.close();
    const left = (await readdir(directory.path)).filter((name) => !/^session\.seg-[0-9a-f]{16}\.md$/.test(name));
    assert.deepEqual(left, [mode.startsWith('journal') ? 'session.jsonl' : 'session.md']);
  } catch (error) {
    // Name the mode and everything needed to replay the kill: four runs share one test.
    (error as Error).message =
      `${mode} (seed ${seed}): ${(error as Error).message}\n${await describeFailure(directory.path, path, trace)}`;
    throw error;
  } finally {
    await directory.dispose();
  }
}

/** The kill's timing, the writer's last output, the files left and the session file's last bytes. */
async function describeFailure(directory: string, path: string, trace: Trace): Promise<string> {
  const files: string[] = [];
  for (const name of await readdir(directory).catch(() => [] as string[])) {
    const info = await stat(join(directory, name)).catch(() => undefined);
    const lock =
      name.endsWith('.lock') || name.endsWith('.break')
        ? ` ${JSON.stringify(await readFile(join(directory, name), 'utf8').catch(() => '?'))}`
        : '';
    files.push(`${name} (${info?.size ?? '?'} bytes, mtime ${info?.mtime.toISOString() ?? '?'})${lock}`);
  }
  const bytes = await readFile(path).catch(() => Buffer.alloc(0));
  return [
    `trace: ${JSON.stringify(trace)}`,
    `files: ${files.join('; ')}`,
    `session file tail (${bytes.length} bytes): ${JSON.stringify(bytes.subarray(Math.max(0, bytes.length - 400)).toString('utf8'))}`,
  ].join('\n');
}

describe('a writer killed at random moments', () => {
  it(`leaves the old session or the new one, whole (${Object.values(KILLS).reduce((sum, count) => sum + count, 0)} kills)`, async () => {
    // Two lanes at a time: this machine has two cores.
    await Promise.all([
      crashRun('transcript', 1).then(() => crashRun('journal-save', 3)),
      crashRun('segments', 2).then(() => crashRun('journal-append', 4)),
    ]);
  });
});
