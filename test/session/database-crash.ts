import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import type { SessionStore } from '../../src/session/index.js';
import { createPostgresStore, createSqliteStore } from '../../src/session/index.js';
import { seededRandom } from '../support/random.js';
import { journalLine, sessionVersion } from './crash-versions.js';
import { asJson } from './helpers.js';

/**
 * Kills a process writing to a database store at random moments and, after every kill, loads the
 * session: it must be whole, the write before the kill or the one in flight, never a mix; and the
 * next writer gets in at once (the dead one's lease is over). Shared by the test suite (a short
 * run) and bench/db-crash.ts (the long one).
 */
export type DatabaseKind = 'sqlite' | 'postgres';
export type CrashMode = 'save' | 'append';

export interface CrashReport {
  kind: DatabaseKind;
  mode: CrashMode;
  kills: number;
  /** Kills that landed while a write was in flight (the load found the write after the last acknowledged one). */
  inFlight: number;
  milliseconds: number;
}

function openStore(kind: DatabaseKind, target: string, session: string): SessionStore {
  return kind === 'sqlite' ? createSqliteStore(target, { session }) : createPostgresStore(target, { session });
}

/**
 * For PostgreSQL: a connection string whose connections the dead writer's are told apart by, and
 * a wait until the server has ended the dead writer's backend. A transaction whose COMMIT the
 * writer sent before it died may still commit after the kill: that is the server's decision, and a
 * load before it would see the write before and a load after it the write in flight. The test
 * waits, so that the next writer starts from what is final.
 */
export function postgresCrashTarget(
  url: string,
  query: (text: string) => Promise<{ rows: { n: number }[] }>,
): { target: string; settle(): Promise<void> } {
  const name = `unstuck-crash-${process.pid}`;
  const target = `${url}${url.includes('?') ? '&' : '?'}application_name=${name}`;
  return {
    target,
    settle: async () => {
      for (let attempt = 0; attempt < 500; attempt += 1) {
        const { rows } = await query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = '${name}'`,
        );
        if (rows[0]?.n === 0) return;
        await sleep(5);
      }
      throw new Error("the dead writer's backend did not end within 2.5 s");
    },
  };
}

export async function databaseCrashRun(options: {
  child: string;
  kind: DatabaseKind;
  mode: CrashMode;
  target: string;
  session: string;
  kills: number;
  seed: number;
  settle?: () => Promise<void>;
}): Promise<CrashReport> {
  const { child, kind, mode, target, session, kills, seed } = options;
  const next = seededRandom(seed);
  const started = Date.now();
  const initial = openStore(kind, target, session);
  if (mode === 'append') await initial.append!([journalLine(0)]);
  else await initial.save(sessionVersion(0));
  await initial.close();
  let first = 1;
  let inFlight = 0;
  for (let kill = 0; kill < kills; kill += 1) {
    const delayMs = next() * 15;
    const reported = await killMidway([child, mode, kind, target, session, String(first)], delayMs);
    await options.settle?.();
    const store = openStore(kind, target, session);
    try {
      const loaded = await store.load();
      assert.deepEqual(loaded.problems, [], `${kind} ${mode} kill ${kill}: loads without problems`);
      if (mode === 'append') {
        const count = loaded.messages.length;
        assert.ok(
          count === reported + 1 || count === reported + 2,
          `${kind} kill ${kill}: ${count} messages after acknowledging ${reported}`,
        );
        assert.deepEqual(
          loaded.messages,
          asJson(Array.from({ length: count }, (_unused, index) => journalLine(index))),
          `${kind} kill ${kill}: every message in order`,
        );
        if (count === reported + 2) inFlight += 1;
        first = count;
      } else {
        const version = [reported, reported + 1].find((candidate) =>
          isDeepStrictEqual(loaded.messages, asJson(sessionVersion(candidate))),
        );
        assert.ok(
          version !== undefined,
          `${kind} kill ${kill}: the session is save ${reported} or ${reported + 1}, whole (found ${loaded.messages.length} messages)`,
        );
        if (version === reported + 1) inFlight += 1;
        first = reported + 2;
      }
    } finally {
      await store.close();
    }
  }
  return { kind, mode, kills, inFlight, milliseconds: Date.now() - started };
}

/** Starts the writer, waits for its first acknowledged write, kills it `delayMs` later; the last write it acknowledged. */
async function killMidway(args: string[], delayMs: number): Promise<number> {
  const writer = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let errors = '';
  const closed = new Promise<number | null>((resolve, reject) => {
    writer.on('close', (code) => resolve(code));
    writer.on('error', (error) => reject(error));
  });
  const firstWrite = new Promise<void>((resolve) => {
    writer.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      resolve();
    });
    writer.on('close', () => resolve());
  });
  writer.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  await firstWrite;
  await sleep(delayMs);
  writer.kill('SIGKILL');
  const code = await closed;
  assert.equal(code, null, `the writer was killed, not ended: ${errors.slice(0, 800)}`);
  const reported = output
    .split('\n')
    .filter((line) => line !== '')
    .map(Number);
  assert.ok(reported.length > 0, `the writer acknowledged a write before the kill: ${errors.slice(0, 800)}`);
  return reported.at(-1)!;
}
