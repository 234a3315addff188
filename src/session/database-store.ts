import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { check } from '../core/check.js';
import { isUnstuckError, UnstuckError } from '../core/errors.js';
import type { Message } from '../core/messages.js';
import { isMessage } from '../core/messages.js';
import type { CheckOptions } from '../core/options.js';
import type { Violation } from '../core/violation.js';
import { createSerial } from './serial.js';
import type { LoadResult, SessionProblem, SessionStore } from './types.js';
import { isProcessAlive } from './writer-lock.js';

/**
 * What the SQLite and PostgreSQL stores share: a session is a row in `unstuck_sessions` (its
 * version, its message count, its lease) and one row per message in `unstuck_messages`, keyed by
 * (session, position), holding the message's JSON text. See docs/decisions/session-database-stores.md.
 */
export interface DatabaseStoreOptions {
  /** Which session of the database this store reads and writes. Default `default`. */
  session?: string;
  /**
   * How long a writer's lease on the session lasts without being renewed. The holder renews it
   * while it lives; a holder that died blocks other writers at most this long (at once when it
   * ran on this host and its process is gone). Default 5000 ms.
   */
  leaseMs?: number;
  /** How long a write waits for another writer's lease before failing with `SESSION_LOCKED`. Default leaseMs + 1000 ms. */
  lockTimeoutMs?: number;
  /**
   * Checks every history given to `save` (a rewrite: after a repair or a trim) with the core's
   * `check`, and calls `onInvalid` with what fails before writing it all the same: a store never
   * drops or repairs a message, but a caller that rewrites a history a provider would refuse hears
   * so. Appends are not checked: mid-step, a tool call waits for its result.
   */
  checkSaves?: { options?: CheckOptions; onInvalid(violations: Violation[]): void };
}

/** A session as the database holds it. */
export interface StoredSession {
  version: number;
  count: number;
  /** [position, JSON] of each message row, in position order. */
  rows: [position: number, body: string][];
}

/**
 * One write, in one transaction: rows from position `keep` on are replaced by `bodies`
 * (`'end'`: after whatever is there). It fails as `conflict` when `expected` is given and the
 * session's version is another, and as `locked` while another holder's lease is live (a lease of
 * `breakHolder` counts as expired: its process is known to be gone).
 */
export interface WriteRequest {
  holder: string;
  leaseMs: number;
  expected: number | undefined;
  keep: number | 'end';
  bodies: readonly string[];
  breakHolder: string | undefined;
}

export type WriteOutcome =
  | { kind: 'written'; version: number; count: number }
  | { kind: 'conflict'; version: number }
  | { kind: 'locked'; holder: string };

/** A database connection opened for one store; every method is one transaction. */
export interface SessionDriver {
  read(): Promise<StoredSession | undefined>;
  write(request: WriteRequest): Promise<WriteOutcome>;
  renew(holder: string, leaseMs: number): Promise<void>;
  release(holder: string): Promise<void>;
  end(): Promise<void>;
}

/** A session as a listing shows it. */
export interface DatabaseSessionEntry {
  id: string;
  messages: number;
  updated: Date;
}

const POLL_MS = 25;
const DEFAULT_LEASE_MS = 5000;

/** What this store knows the database holds: the version it last read or wrote, and each message's JSON when it read them all. */
interface Known {
  version: number;
  count: number;
  /** The JSON of positions 0..count-1, or undefined when a load found damage (the next save writes everything). */
  bodies: string[] | undefined;
}

/**
 * A SessionStore over a driver. The first write after a load expects the version that load saw:
 * if another writer got in between, it fails with `SESSION_CONFLICT` and writes nothing (load
 * again and go on). A write takes the session's lease, renewed while the store is open and
 * released by `close`; while another live holder has it, writes wait up to `lockTimeoutMs`.
 */
export function createDatabaseStore(
  label: string,
  connect: () => Promise<SessionDriver>,
  options: DatabaseStoreOptions,
): SessionStore {
  const leaseMs = Math.max(50, options.leaseMs ?? DEFAULT_LEASE_MS);
  const lockTimeoutMs = options.lockTimeoutMs ?? leaseMs + 1000;
  const session = options.session ?? 'default';
  const serial = createSerial();
  const holder = `${hostname()}/${process.pid}/${randomBytes(6).toString('hex')}`;
  let driver: Promise<SessionDriver> | undefined;
  let known: Known | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  function ready(): Promise<SessionDriver> {
    driver ??= connect().catch((error: unknown) => {
      driver = undefined;
      throw error;
    });
    return driver;
  }

  async function load(): Promise<LoadResult> {
    const stored = await (await ready()).read();
    if (stored === undefined) {
      known = { version: 0, count: 0, bodies: [] };
      return { messages: [], problems: [] };
    }
    const messages: Message[] = [];
    const problems: SessionProblem[] = [];
    const bodies: string[] = [];
    let next = 0;
    for (const [position, body] of stored.rows) {
      if (position !== next)
        problems.push({ file: label, why: `messages at positions ${next}..${position - 1} are missing` });
      next = position + 1;
      const message = decode(body);
      if (typeof message === 'string') {
        problems.push({
          file: label,
          why: `the message at position ${position} does not decode (${message}): it was left out`,
        });
        continue;
      }
      messages.push(message);
      bodies.push(body);
    }
    if (next !== stored.count)
      problems.push({
        file: label,
        why: `the session declares ${stored.count} messages but rows reach position ${next}`,
      });
    known = { version: stored.version, count: stored.count, bodies: problems.length === 0 ? bodies : undefined };
    return { messages, problems };
  }

  async function write(bodies: string[], keep: number | 'end'): Promise<void> {
    const database = await ready();
    const deadline = Date.now() + lockTimeoutMs;
    let breakHolder: string | undefined;
    for (;;) {
      const outcome = await database.write({ holder, leaseMs, expected: known?.version, keep, bodies, breakHolder });
      if (outcome.kind === 'written') {
        const before = known?.bodies;
        const kept =
          keep === 'end'
            ? before !== undefined && known?.count === outcome.count - bodies.length
              ? before
              : undefined
            : keep === 0
              ? []
              : before?.slice(0, keep);
        known = {
          version: outcome.version,
          count: outcome.count,
          bodies: kept === undefined ? undefined : [...kept, ...bodies],
        };
        startHeartbeat(database);
        return;
      }
      if (outcome.kind === 'conflict') {
        throw new UnstuckError(
          'SESSION_CONFLICT',
          `session '${session}' was written by another writer since this store read it (version ${known?.version ?? 0}, now ${outcome.version}): nothing was written; load it again`,
          { file: label },
        );
      }
      if (holderIsGone(outcome.holder)) {
        breakHolder = outcome.holder;
        continue;
      }
      if (Date.now() >= deadline) {
        throw new UnstuckError(
          'SESSION_LOCKED',
          `session '${session}' is being written by ${describeHolder(outcome.holder)}; waited ${lockTimeoutMs} ms`,
          { file: label },
        );
      }
      await sleep(POLL_MS);
    }
  }

  function startHeartbeat(database: SessionDriver): void {
    if (heartbeat !== undefined) return;
    heartbeat = setInterval(
      () => {
        database.renew(holder, leaseMs).catch(() => undefined);
      },
      Math.max(20, Math.floor(leaseMs / 3)),
    );
    heartbeat.unref();
  }

  async function save(messages: readonly Message[]): Promise<void> {
    if (options.checkSaves !== undefined) {
      const violations = check(messages, options.checkSaves.options);
      if (violations.length > 0) options.checkSaves.onInvalid(violations);
    }
    const bodies = messages.map(encode);
    // Only what changed is written: the rows of the longest prefix the database already holds stay.
    let keep = 0;
    const before = known?.bodies;
    if (before !== undefined) {
      const limit = Math.min(before.length, bodies.length);
      while (keep < limit && before[keep] === bodies[keep]) keep += 1;
      if (keep === bodies.length && keep === before.length) bodies.length = 0;
    }
    await write(bodies.slice(keep), keep);
  }

  async function append(messages: readonly Message[]): Promise<void> {
    if (messages.length === 0) return;
    await write(messages.map(encode), known === undefined ? 'end' : known.count);
  }

  async function close(): Promise<void> {
    if (heartbeat !== undefined) clearInterval(heartbeat);
    heartbeat = undefined;
    known = undefined;
    const opened = driver;
    driver = undefined;
    if (opened === undefined) return;
    const database = await opened.catch(() => undefined);
    if (database === undefined) return;
    try {
      await database.release(holder);
    } finally {
      await database.end();
    }
  }

  const guard = <T>(operation: () => Promise<T>): Promise<T> =>
    serial(() => operation().catch((error: unknown) => Promise.reject(asStoreError(label, error))));
  return {
    load: () => guard(load),
    save: (messages) => guard(() => save(messages)),
    append: (messages) => guard(() => append(messages)),
    close: () => guard(close),
  };
}

function encode(message: Message): string {
  return JSON.stringify(message);
}

/** The message a row holds, or why it is not one. */
function decode(body: string): Message | string {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return `not JSON: ${(error as Error).message}`;
  }
  return isMessage(value) ? value : 'not a message: no string role';
}

/** A holder on this host whose process is gone: its lease is over now, not when it expires. */
function holderIsGone(holder: string): boolean {
  const [host, pid] = holder.split('/');
  const number = Number(pid);
  return host === hostname() && Number.isInteger(number) && number > 0 && !isProcessAlive(number);
}

function describeHolder(holder: string): string {
  const [host, pid] = holder.split('/');
  return pid === undefined ? 'another writer' : `process ${pid} on ${host}`;
}

function asStoreError(label: string, error: unknown): UnstuckError {
  if (isUnstuckError(error)) return error;
  return new UnstuckError('IO', (error as Error).message, { file: label, cause: error });
}
