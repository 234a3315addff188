import type { Pool, PoolClient, PoolConfig } from 'pg';
import { isUnstuckError, UnstuckError } from '../core/errors.js';
import { newerSchema, POSTGRES_MIGRATIONS, SESSION_SCHEMA_VERSION } from './database-schema.js';
import type {
  DatabaseSessionEntry,
  DatabaseStoreOptions,
  SessionDriver,
  StoredSession,
  WriteOutcome,
} from './database-store.js';
import { createDatabaseStore } from './database-store.js';
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
  const pool = isPool(connection)
    ? connection
    : new (await loadDriver()).Pool({
        max: 1,
        connectionTimeoutMillis: 10_000,
        ...(typeof connection === 'string' ? { connectionString: connection } : connection),
      });
  pool.on('error', () => undefined);
  try {
    const present = await pool.query("SELECT to_regclass('unstuck_sessions') IS NOT NULL AS present");
    if (present.rows[0]?.present !== true) return [];
    const rows = await pool.query<{ id: string; count: number; updated_at: Date }>(
      'SELECT id, count, updated_at FROM unstuck_sessions ORDER BY updated_at DESC, id DESC',
    );
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
  const config = isPool(connection) ? ((connection as unknown as { options?: PoolConfig }).options ?? {}) : connection;
  if (typeof config.connectionString === 'string') return describeConnection(config.connectionString);
  return `postgres://${config.user ?? ''}${config.user === undefined ? '' : '@'}${String(config.host ?? 'localhost')}:${config.port ?? 5432}/${config.database ?? ''}`;
}

function isPool(connection: PostgresConnection): connection is Pool {
  return (
    typeof connection === 'object' &&
    typeof (connection as Pool).connect === 'function' &&
    typeof (connection as Pool).query === 'function'
  );
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
    throw new UnstuckError(
      'CONFIG',
      `createPostgresStore needs the pg package (npm install pg@8): ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/** Pools whose database is known to be at SESSION_SCHEMA_VERSION: stores sharing a pool check once. */
const migrated = new WeakSet<Pool>();

async function migrate(pool: Pool, label: string): Promise<void> {
  if (migrated.has(pool)) return;
  await migrateOnce(pool, label);
  migrated.add(pool);
}

async function migrateOnce(pool: Pool, label: string): Promise<void> {
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
    // One statement, so one snapshot: the session row with its messages.
    read: () =>
      withClient(async (client) => {
        const result = await client.query<{
          version: string;
          count: number;
          position: number | null;
          body: string | null;
        }>(
          'SELECT s.version, s.count, m.position, m.body FROM unstuck_sessions s LEFT JOIN unstuck_messages m ON m.session = s.id WHERE s.id = $1 ORDER BY m.position',
          [session],
        );
        const first = result.rows[0];
        if (first === undefined) return undefined;
        const rows: StoredSession['rows'] = [];
        for (const row of result.rows) if (row.position !== null) rows.push([row.position, row.body!]);
        return { version: Number(first.version), count: first.count, rows } satisfies StoredSession;
      }),
    write: (request) =>
      withClient(async (client) => {
        const result = await client.query<{
          o_outcome: string;
          o_version: string;
          o_count: number;
          o_holder: string | null;
        }>('SELECT * FROM unstuck_write($1, $2, $3, $4, $5, $6, $7)', [
          session,
          request.holder,
          request.leaseMs,
          request.expected ?? null,
          request.keep === 'end' ? null : request.keep,
          request.bodies,
          request.breakHolder ?? null,
        ]);
        return toOutcome(result.rows[0]!);
      }),
    renew: (holder, leaseMs) =>
      withClient(async (client) => {
        await client.query(
          "UPDATE unstuck_sessions SET lease_expires = clock_timestamp() + $3 * interval '1 millisecond' WHERE id = $1 AND lease_holder = $2",
          [session, holder, leaseMs],
        );
      }),
    release: (holder) =>
      withClient(async (client) => {
        await client.query(
          'UPDATE unstuck_sessions SET lease_holder = NULL, lease_expires = NULL WHERE id = $1 AND lease_holder = $2',
          [session, holder],
        );
      }),
    end: async () => {
      if (owned) await pool.end();
    },
  };
}

function toOutcome(row: {
  o_outcome: string;
  o_version: string;
  o_count: number;
  o_holder: string | null;
}): WriteOutcome {
  const version = Number(row.o_version);
  if (row.o_outcome === 'written') return { kind: 'written', version, count: row.o_count };
  if (row.o_outcome === 'conflict') return { kind: 'conflict', version };
  return { kind: 'locked', holder: row.o_holder ?? '' };
}

/** pg's failures as one line a person can act on (`file` says where, without the password). */
function asConnectionError(error: unknown, label: string): UnstuckError {
  if (isUnstuckError(error)) return error;
  const code = (error as { code?: string }).code;
  const message = (error as Error).message;
  if (
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'EHOSTUNREACH' ||
    code === 'ETIMEDOUT' ||
    /timeout exceeded when trying to connect/i.test(message)
  ) {
    return new UnstuckError('IO', `cannot reach the PostgreSQL server: ${code ?? message}`, {
      file: label,
      cause: error,
    });
  }
  if (code === '28P01' || code === '28000')
    return new UnstuckError('CONFIG', `the PostgreSQL server refused the login: ${message}`, {
      file: label,
      cause: error,
    });
  if (code === '3D000') return new UnstuckError('CONFIG', `${message}`, { file: label, cause: error });
  return new UnstuckError('IO', `PostgreSQL: ${message}${code === undefined ? '' : ` (${code})`}`, {
    file: label,
    cause: error,
  });
}
