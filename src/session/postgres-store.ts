import type { Pool, PoolClient, PoolConfig } from 'pg';
import { isUnstuckError, UnstuckError } from '../core/errors.js';
import type { DatabaseSessionEntry, DatabaseStoreOptions, SessionDriver, StoredSession, WriteOutcome, WriteRequest } from './database-store.js';
import { createDatabaseStore } from './database-store.js';
import { newerSchema, POSTGRES_MIGRATIONS, SESSION_SCHEMA_VERSION } from './database-schema.js';
import type { SessionStore } from './types.js';

export type PostgresStoreOptions = DatabaseStoreOptions;

/** Anything with pg's Pool API: a service passes its own pool, shared by all its stores. */
export type PostgresConnection = string | PoolConfig | Pool;

/** Serialises first uses of an empty database across processes (pg_advisory_xact_lock key). */
const MIGRATION_LOCK = 0x756e7374; // 'unst'

/**
 * A session in PostgreSQL, for services on several nodes. `connection` is a connection string
 * (`postgres://user:password@host:port/db`), a pg pool config, or a pg `Pool` the caller owns (it
 * is not ended by `close`). Needs the optional peer dependency `pg` (8.x), loaded on first use.
 * The lease's clock is the server's (`clock_timestamp()`), so nodes' clocks do not matter.
 */
export function createPostgresStore(connection: PostgresConnection, options: PostgresStoreOptions = {}): SessionStore {
  const session = options.session ?? 'default';
  const label = `${describeConnection(connection)}#${session}`;
  return createDatabaseStore(label, () => openPostgres(connection, session, label), options);
}

/** Every session in the database, most recently written first. */
export async function listPostgresSessions(connection: PostgresConnection): Promise<DatabaseSessionEntry[]> {
  const label = describeConnection(connection);
  const owned = !isPool(connection);
  const pool = isPool(connection) ? connection : new (await loadDriver()).Pool({ max: 1, connectionTimeoutMillis: 10_000, ...(typeof connection === 'string' ? { connectionString: connection } : connection) });
  pool.on('error', () => undefined);
  try {
    const present = await pool.query("SELECT to_regclass('unstuck_sessions') IS NOT NULL AS present");
    if (present.rows[0]?.present !== true) return [];
    const rows = await pool.query<{ id: string; count: number; updated_at: Date }>('SELECT id, count, updated_at FROM unstuck_sessions ORDER BY updated_at DESC, id DESC');
    return rows.rows.map((row) => ({ id: row.id, messages: row.count, updated: row.updated_at }));
  } catch (error) {
    throw asConnectionError(error, label);
  } finally {
    if (owned) await pool.end().catch(() => undefined);
  }
}

/** Where the database is, without its password: safe to print. */
export function describeConnection(connection: PostgresConnection): string {
  if (typeof connection === 'string') {
    try {
      const url = new URL(connection);
      url.password = '';
      url.search = '';
      return url.toString();
    } catch {
      return 'postgres://(unparsable connection string)';
    }
  }
  const config = isPool(connection) ? (connection as unknown as { options?: PoolConfig }).options ?? {} : connection;
  if (typeof config.connectionString === 'string') return describeConnection(config.connectionString);
  return `postgres://${config.user ?? ''}${config.user === undefined ? '' : '@'}${String(config.host ?? 'localhost')}:${config.port ?? 5432}/${config.database ?? ''}`;
}

function isPool(connection: PostgresConnection): connection is Pool {
  return typeof connection === 'object' && typeof (connection as Pool).connect === 'function' && typeof (connection as Pool).query === 'function';
}

async function openPostgres(connection: PostgresConnection, session: string, label: string): Promise<SessionDriver> {
  const owned = !isPool(connection);
  let pool: Pool;
  if (isPool(connection)) {
    pool = connection;
  } else {
    const { Pool: PoolClass } = await loadDriver();
    const config: PoolConfig = typeof connection === 'string' ? { connectionString: connection } : { ...connection };
    pool = new PoolClass({ max: 2, connectionTimeoutMillis: 10_000, ...config });
    // An idle client's error (the server restarted) must not crash the process: the next query reports it.
    pool.on('error', () => undefined);
  }
  try {
    await migrate(pool, label);
  } catch (error) {
    if (owned) await pool.end().catch(() => undefined);
    throw asConnectionError(error, label);
  }
  return createPostgresDriver(pool, session, label, owned);
}

async function loadDriver(): Promise<typeof import('pg')> {
  try {
    const module = await import('pg');
    return (module as unknown as { default?: typeof import('pg') }).default ?? module;
  } catch (error) {
    throw new UnstuckError('CONFIG', `createPostgresStore needs the pg package (npm install pg@8): ${(error as Error).message}`, { cause: error });
  }
}

async function migrate(pool: Pool, label: string): Promise<void> {
  const client = await pool.connect();
  try {
    const found = await schemaVersion(client);
    if (found === SESSION_SCHEMA_VERSION) return;
    if (found > SESSION_SCHEMA_VERSION) throw newerSchema(found, label);
    await inTransaction(client, async () => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await client.query('CREATE TABLE IF NOT EXISTS unstuck_schema (version integer NOT NULL)');
      const current = await schemaVersion(client);
      if (current > SESSION_SCHEMA_VERSION) throw newerSchema(current, label);
      for (const migration of POSTGRES_MIGRATIONS) {
        if (migration.version <= current) continue;
        await client.query(migration.sql);
        await client.query('INSERT INTO unstuck_schema (version) VALUES ($1)', [migration.version]);
      }
    });
  } finally {
    client.release();
  }
}

async function schemaVersion(client: PoolClient): Promise<number> {
  const table = await client.query("SELECT to_regclass('unstuck_schema') IS NOT NULL AS present");
  if (table.rows[0]?.present !== true) return 0;
  const result = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM unstuck_schema');
  return result.rows[0]?.version ?? 0;
}

async function inTransaction<T>(client: PoolClient, body: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await body();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

function createPostgresDriver(pool: Pool, session: string, label: string, owned: boolean): SessionDriver {
  async function withClient<T>(body: (client: PoolClient) => Promise<T>): Promise<T> {
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw asConnectionError(error, label);
    }
    let broken = false;
    try {
      return await body(client);
    } catch (error) {
      broken = !isUnstuckError(error);
      throw asConnectionError(error, label);
    } finally {
      // A client that failed mid-transaction is dropped rather than handed to the next write.
      client.release(broken);
    }
  }

  return {
    read: () => withClient(async (client) => {
      // One snapshot for the session row and its messages.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      try {
        const head = await client.query<{ version: string; count: number }>('SELECT version, count FROM unstuck_sessions WHERE id = $1', [session]);
        const row = head.rows[0];
        if (row === undefined) return undefined;
        const rows = await client.query<{ position: number; body: string }>('SELECT position, body FROM unstuck_messages WHERE session = $1 ORDER BY position', [session]);
        return { version: Number(row.version), count: row.count, rows: rows.rows } satisfies StoredSession;
      } finally {
        await client.query('COMMIT');
      }
    }),
    write: (request) => withClient((client) => inTransaction(client, () => writeIn(client, session, request))),
    renew: (holder, leaseMs) => withClient(async (client) => {
      await client.query("UPDATE unstuck_sessions SET lease_expires = clock_timestamp() + $3 * interval '1 millisecond' WHERE id = $1 AND lease_holder = $2", [session, holder, leaseMs]);
    }),
    release: (holder) => withClient(async (client) => {
      await client.query('UPDATE unstuck_sessions SET lease_holder = NULL, lease_expires = NULL WHERE id = $1 AND lease_holder = $2', [session, holder]);
    }),
    end: async () => {
      if (owned) await pool.end();
    },
  };
}

async function writeIn(client: PoolClient, session: string, request: WriteRequest): Promise<WriteOutcome> {
  await client.query('INSERT INTO unstuck_sessions (id, version, count) VALUES ($1, 0, 0) ON CONFLICT (id) DO NOTHING', [session]);
  const head = await client.query<{ version: string; count: number; lease_holder: string | null; live: boolean }>(
    'SELECT version, count, lease_holder, coalesce(lease_expires > clock_timestamp(), false) AS live FROM unstuck_sessions WHERE id = $1 FOR UPDATE',
    [session],
  );
  const row = head.rows[0]!;
  const version = Number(row.version);
  if (row.lease_holder !== null && row.lease_holder !== request.holder && row.lease_holder !== request.breakHolder && row.live) return { kind: 'locked', holder: row.lease_holder };
  if (request.expected !== undefined && version !== request.expected) return { kind: 'conflict', version };
  const keep = request.keep === 'end' ? row.count : request.keep;
  if (keep < row.count) await client.query('DELETE FROM unstuck_messages WHERE session = $1 AND position >= $2', [session, keep]);
  if (request.bodies.length > 0) {
    // One statement for the whole step, whatever its size.
    await client.query(
      'INSERT INTO unstuck_messages (session, position, body) SELECT $1, $2 + ordinality - 1, body FROM unnest($3::text[]) WITH ORDINALITY AS step (body, ordinality)',
      [session, keep, request.bodies],
    );
  }
  const count = keep + request.bodies.length;
  await client.query(
    "UPDATE unstuck_sessions SET version = $2, count = $3, lease_holder = $4, lease_expires = clock_timestamp() + $5 * interval '1 millisecond', updated_at = now() WHERE id = $1",
    [session, version + 1, count, request.holder, request.leaseMs],
  );
  return { kind: 'written', version: version + 1, count };
}

/** pg's failures as one line a person can act on (`file` says where, without the password). */
function asConnectionError(error: unknown, label: string): UnstuckError {
  if (isUnstuckError(error)) return error;
  const code = (error as { code?: string }).code;
  const message = (error as Error).message;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'ETIMEDOUT' || /timeout exceeded when trying to connect/i.test(message)) {
    return new UnstuckError('IO', `cannot reach the PostgreSQL server: ${code ?? message}`, { file: label, cause: error });
  }
  if (code === '28P01' || code === '28000') return new UnstuckError('CONFIG', `the PostgreSQL server refused the login: ${message}`, { file: label, cause: error });
  if (code === '3D000') return new UnstuckError('CONFIG', `${message}`, { file: label, cause: error });
  return new UnstuckError('IO', `PostgreSQL: ${message}${code === undefined ? '' : ` (${code})`}`, { file: label, cause: error });
}
