import { UnstuckError } from '../core/errors.js';

/**
 * The session schema the database stores create on first use, one numbered migration at a time
 * (recorded in `unstuck_schema`). A database at a newer version is refused, never changed.
 * Messages are JSON text, not JSONB: JSONB reorders keys and drops duplicates, and the stores
 * give back exactly what they were given.
 *
 * unstuck_sessions  id, version (+1 per write: the expected-version check), count (messages),
 *                   lease_holder and lease_expires (the writer's lease), updated_at
 * unstuck_messages  (session, position) primary key, body (one message's JSON)
 */
export const SESSION_SCHEMA_VERSION = 1;

export interface Migration {
  version: number;
  sql: string;
}

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE unstuck_sessions (
        id TEXT PRIMARY KEY,
        version INTEGER NOT NULL,
        count INTEGER NOT NULL,
        lease_holder TEXT,
        lease_expires INTEGER,
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE unstuck_messages (
        session TEXT NOT NULL,
        position INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (session, position)
      );`,
  },
];

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE unstuck_sessions (
        id text PRIMARY KEY,
        version bigint NOT NULL,
        count integer NOT NULL,
        lease_holder text,
        lease_expires timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE unstuck_messages (
        session text NOT NULL REFERENCES unstuck_sessions (id) ON DELETE CASCADE,
        position integer NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (session, position)
      );`,
  },
];

export function newerSchema(found: number, label: string): UnstuckError {
  return new UnstuckError('SESSION_SCHEMA', `the database holds session schema version ${found}, newer than this unstuck knows (${SESSION_SCHEMA_VERSION}): upgrade unstuck; nothing was changed`, { file: label });
}
