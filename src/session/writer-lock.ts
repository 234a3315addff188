import { randomBytes } from 'node:crypto';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { UnstuckError } from '../core/errors.js';

/**
 * One writer per session file: `FILE.lock`, created exclusively (`O_EXCL`), holding the owner's
 * pid and host. A lock whose process is gone (same host, `kill(pid, 0)` says ESRCH) is stale and
 * is taken over; breaking it is itself guarded by `FILE.lock.break`, so two processes that both
 * find the same stale lock cannot both take it.
 */
export interface WriterLock {
  readonly path: string;
  release(): Promise<void>;
}

interface Holder {
  pid: number;
  host: string;
  since: string;
  /** Tells two holders in one process apart. */
  nonce?: string;
}

const POLL_MS = 20;
/** A lock file that stays unreadable this long was left by a writer that died while creating it. */
const UNREADABLE_GRACE_MS = 2000;

export async function acquireWriterLock(target: string, options: { timeoutMs?: number } = {}): Promise<WriterLock> {
  const path = `${target}.lock`;
  const timeoutMs = options.timeoutMs ?? 3000;
  const deadline = Date.now() + timeoutMs;
  const mine = `${JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString(), nonce: randomBytes(6).toString('hex') } satisfies Holder)}\n`;
  for (;;) {
    try {
      await writeFile(path, mine, { flag: 'wx', mode: 0o644 });
      return { path, release: () => releaseLock(path, mine) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        // Named after the file the caller means to write, not the lock file it never heard of.
        throw new UnstuckError('IO', `cannot write: its directory does not exist (${code})`, {
          file: target,
          cause: error,
        });
      }
      if (code !== 'EEXIST') {
        throw new UnstuckError('IO', `cannot create the lock file: ${(error as Error).message}`, {
          file: path,
          cause: error,
        });
      }
    }
    const held = await readHolder(path);
    if (held?.stale) {
      await breakStaleLock(path, held.raw);
      continue;
    }
    if (Date.now() >= deadline) {
      const who =
        held?.holder === undefined
          ? 'another writer'
          : `process ${held.holder.pid} on ${held.holder.host} (since ${held.holder.since})`;
      throw new UnstuckError('SESSION_LOCKED', `the session is being written by ${who}; waited ${timeoutMs} ms`, {
        file: target,
      });
    }
    await sleep(POLL_MS);
  }
}

async function readHolder(path: string): Promise<{ raw: string; holder?: Holder; stale: boolean } | undefined> {
  let raw: string;
  try {
    raw = await readFile(path, 'utf8');
  } catch {
    return undefined; // released between our attempt and the read: just try again
  }
  const holder = parseHolder(raw);
  if (holder === undefined) {
    const age = await stat(path).then(
      (info) => Date.now() - info.mtimeMs,
      () => 0,
    );
    return { raw, stale: age > UNREADABLE_GRACE_MS };
  }
  return { raw, holder, stale: holder.host === hostname() && !isProcessAlive(holder.pid) };
}

function parseHolder(raw: string): Holder | undefined {
  try {
    const value = JSON.parse(raw) as Partial<Holder>;
    if (typeof value.pid === 'number' && typeof value.host === 'string')
      return { pid: value.pid, host: value.host, since: String(value.since) };
  } catch {
    // an unreadable lock is judged by its age
  }
  return undefined;
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function breakStaleLock(path: string, staleContent: string): Promise<void> {
  const breaker = `${path}.break`;
  try {
    await writeFile(breaker, `${process.pid}\n`, { flag: 'wx' });
  } catch {
    // Someone else is breaking it. If that someone died mid-break, clear their breaker.
    const pid = Number.parseInt(await readFile(breaker, 'utf8').catch(() => ''), 10);
    const age = await stat(breaker).then(
      (info) => Date.now() - info.mtimeMs,
      () => 0,
    );
    if (Number.isInteger(pid) ? !isProcessAlive(pid) : age > UNREADABLE_GRACE_MS) await rm(breaker, { force: true });
    await sleep(POLL_MS);
    return;
  }
  try {
    // Still the same stale lock? Then nobody took it over while we looked.
    const now = await readFile(path, 'utf8').catch(() => undefined);
    if (now === staleContent) await rm(path, { force: true });
  } finally {
    await rm(breaker, { force: true });
  }
}

async function releaseLock(path: string, mine: string): Promise<void> {
  const now = await readFile(path, 'utf8').catch(() => undefined);
  if (now === mine) await rm(path, { force: true });
}
