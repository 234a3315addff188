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
      );
      -- One write in one round trip (its own transaction): see WriteRequest in database-store.ts.
      CREATE FUNCTION unstuck_write(p_session text, p_holder text, p_lease_ms integer, p_expected bigint, p_keep integer, p_bodies text[], p_break text)
      RETURNS TABLE (o_outcome text, o_version bigint, o_count integer, o_holder text)
      LANGUAGE plpgsql AS $$
      DECLARE
        r unstuck_sessions%ROWTYPE;
        k integer;
        n integer := coalesce(array_length(p_bodies, 1), 0);
      BEGIN
        INSERT INTO unstuck_sessions (id, version, count) VALUES (p_session, 0, 0) ON CONFLICT (id) DO NOTHING;
        SELECT * INTO r FROM unstuck_sessions WHERE id = p_session FOR UPDATE;
        IF r.lease_holder IS NOT NULL AND r.lease_holder <> p_holder AND r.lease_holder IS DISTINCT FROM p_break AND r.lease_expires > clock_timestamp() THEN
          RETURN QUERY SELECT 'locked'::text, r.version, r.count, r.lease_holder;
          RETURN;
        END IF;
        IF p_expected IS NOT NULL AND r.version <> p_expected THEN
          RETURN QUERY SELECT 'conflict'::text, r.version, r.count, r.lease_holder;
          RETURN;
        END IF;
        k := coalesce(p_keep, r.count);
        IF k < r.count THEN
          DELETE FROM unstuck_messages WHERE session = p_session AND position >= k;
        END IF;
        IF n > 0 THEN
          INSERT INTO unstuck_messages (session, position, body) SELECT p_session, k + t.o - 1, t.b FROM unnest(p_bodies) WITH ORDINALITY AS t (b, o);
        END IF;
        UPDATE unstuck_sessions SET version = r.version + 1, count = k + n, lease_holder = p_holder,
          lease_expires = clock_timestamp() + p_lease_ms * interval '1 millisecond', updated_at = now()
          WHERE id = p_session;
        RETURN QUERY SELECT 'written'::text, r.version + 1, k + n, p_holder;
      END
      $$;`,
  },
];

export function newerSchema(found: number, label: string): UnstuckError {
  return new UnstuckError(
    'SESSION_SCHEMA',
    `the database holds session schema version ${found}, newer than this unstuck knows (${SESSION_SCHEMA_VERSION}): upgrade unstuck; nothing was changed`,
    { file: label },
  );
}
