import { Buffer } from 'node:buffer';
import { isAbsolute, resolve } from 'node:path';
import type { PoolConfig } from 'pg';
import { UnstuckError } from '../core/errors.js';
import type { Message } from '../core/messages.js';
import type { DatabaseSessionEntry, LoadResult, SessionStore } from '../session/index.js';
import { createPostgresStore, createSqliteStore, listPostgresSessions, listSqliteSessions } from '../session/index.js';
import type { HistoryDocument } from './documents.js';

/**
 * Sessions in a database, named on the command line:
 *
 *   sqlite:PATH#SESSION                       a SQLite file (PATH relative to the working directory)
 *   postgres://USER@HOST:PORT/DB#SESSION      PostgreSQL (postgresql:// too); the password comes from
 *                                             PGPASSWORD, never from the URL, which is printed
 *
 * `#SESSION` names one session; `unstuck chat --store` takes the URL without it (the chat names
 * its sessions). See docs/decisions/session-database-stores.md.
 */
export interface StoreUrl {
  kind: 'sqlite' | 'postgres';
  /** The URL without the session: what is printed. */
  base: string;
  session: string | undefined;
  /** sqlite: the file's absolute path; postgres: the connection config (with PGPASSWORD). */
  path: string;
  connection: PoolConfig;
}

const SESSION = /^[^\s#]+$/;

export function isStoreUrl(text: string): boolean {
  return /^sqlite:/i.test(text) || /^postgres(ql)?:\/\//i.test(text);
}

/** Parses a store URL; bad syntax is one USAGE error saying what to write instead. */
export function parseStoreUrl(
  text: string,
  context: { cwd: string; env: Record<string, string | undefined> },
): StoreUrl {
  const hash = text.lastIndexOf('#');
  const base = hash === -1 ? text : text.slice(0, hash);
  const rawSession = hash === -1 ? undefined : text.slice(hash + 1);
  let session: string | undefined;
  if (rawSession !== undefined) {
    try {
      session = decodeURIComponent(rawSession);
    } catch {
      session = rawSession;
    }
    if (!SESSION.test(session))
      throw new UnstuckError('USAGE', `'#${rawSession}' is not a session id: write ${base}#SESSION-ID (no spaces)`, {
        file: base,
      });
  }
  if (/^sqlite:/i.test(base)) {
    const file = base.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (file === '')
      throw new UnstuckError('USAGE', 'a SQLite store is sqlite:PATH#SESSION-ID (PATH the database file)', {
        file: text,
      });
    const path = isAbsolute(file) ? file : resolve(context.cwd, file);
    return { kind: 'sqlite', base, session, path, connection: {} };
  }
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new UnstuckError('USAGE', 'not a PostgreSQL URL: write postgres://USER@HOST:PORT/DATABASE#SESSION-ID', {
      file: '(store URL)',
    });
  }
  if (url.password !== '' || url.searchParams.has('password')) {
    throw new UnstuckError(
      'USAGE',
      'put the PostgreSQL password in PGPASSWORD (or ~/.pgpass), not in the URL: the URL is printed and stays in the shell history',
      { file: safeUrl(url) },
    );
  }
  // pg lets the connection string's fields win over the config's, so the password goes into the
  // string pg is given (and only there: `base`, which is printed, has none).
  const password = context.env['PGPASSWORD'];
  if (password !== undefined && password !== '') url.password = encodeURIComponent(password);
  return { kind: 'postgres', base, session, path: base, connection: { connectionString: url.toString() } };
}

function safeUrl(url: URL): string {
  const copy = new URL(url.toString());
  copy.password = '';
  copy.search = '';
  return copy.toString();
}

/** The store for one session of `url` (its own `#SESSION`, or `session` when the URL has none). */
export function openStoreUrl(url: StoreUrl, session = url.session): SessionStore {
  if (session === undefined)
    throw new UnstuckError('USAGE', `name the session: ${url.base}#SESSION-ID`, { file: url.base });
  return url.kind === 'sqlite'
    ? createSqliteStore(url.path, { session })
    : createPostgresStore(url.connection, { session });
}

export function listStoreSessions(url: StoreUrl): Promise<DatabaseSessionEntry[]> {
  return url.kind === 'sqlite' ? listSqliteSessions(url.path) : listPostgresSessions(url.connection);
}

/** What `check`, `fix` and `convert` read from a store URL: the session's messages and what could not be decoded. */
export async function readStoreUrl(
  text: string,
  context: { cwd: string; env: Record<string, string | undefined> },
): Promise<LoadResult & { label: string }> {
  const url = parseStoreUrl(text, context);
  const store = openStoreUrl(url);
  try {
    const loaded = await store.load();
    return { ...loaded, label: `${url.base}#${url.session ?? ''}` };
  } finally {
    await store.close();
  }
}

/**
 * Replaces the session at `text` with `messages`, in one transaction. With `backup`, the session
 * as it was is first copied to the session `ID.bak` of the same database (what `fix --write` keeps).
 */
export async function writeStoreUrl(
  text: string,
  context: { cwd: string; env: Record<string, string | undefined> },
  messages: readonly Message[],
  options: { backup?: readonly Message[] } = {},
): Promise<void> {
  const url = parseStoreUrl(text, context);
  if (options.backup !== undefined) {
    const backup = openStoreUrl(url, `${url.session ?? ''}.bak`);
    try {
      await backup.save(options.backup);
    } finally {
      await backup.close();
    }
  }
  const store = openStoreUrl(url);
  try {
    await store.save(messages);
  } finally {
    await store.close();
  }
}

/** readDocument's answer for a store URL, as a JSON array (what `fix` prints when it does not write). */
export async function readStoreDocument(
  text: string,
  context: { cwd: string; env: Record<string, string | undefined> },
): Promise<HistoryDocument> {
  const loaded = await readStoreUrl(text, context);
  const json = `${JSON.stringify(loaded.messages, null, 2)}\n`;
  return {
    file: text,
    format: 'json-array',
    wire: 'openai-chat',
    messages: loaded.messages,
    items: loaded.messages,
    problems: loaded.problems,
    text: json,
    bytes: Buffer.from(json, 'utf8'),
    indent: 2,
    evidence: 'a session of the database store the URL names (openai-chat)',
  };
}
