import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { isUnstuckError } from '../../src/core/errors.js';
import { createPostgresStore } from '../../src/session/index.js';
import type { PostgresServer } from '../support/postgres-server.js';
import { freePort, postgresSkipReason, startPostgres } from '../support/postgres-server.js';
import { bundleDatabaseChild } from './database-bundle.js';
import type { DatabaseFixture } from './database-store-behaviour.js';
import { databaseStoreBehaviour } from './database-store-behaviour.js';
import { sessionStoreContract } from './store-contract.js';

const skip = postgresSkipReason();
let server: PostgresServer;
let pool: pg.Pool;
let child: Awaited<ReturnType<typeof bundleDatabaseChild>>;
let sessions = 0;

/** The PostgreSQL server the tests start, reached directly for what an operator would do. */
function fixture(): DatabaseFixture {
  const query = async (text: string, values: unknown[]) =>
    (await pool.query(text, values)).rows as Record<string, unknown>[];
  return {
    open: (session, options = {}) => createPostgresStore(server.url, { ...options, session }),
    setBody: async (session, position, body) => {
      await query('UPDATE unstuck_messages SET body = $1 WHERE session = $2 AND position = $3', [
        body,
        session,
        position,
      ]);
    },
    setLease: async (session, holder, ms) => {
      await query(
        "UPDATE unstuck_sessions SET lease_holder = $1, lease_expires = clock_timestamp() + $2 * interval '1 millisecond' WHERE id = $3",
        [holder, ms, session],
      );
    },
    addSchemaVersion: async (version) => {
      await query('INSERT INTO unstuck_schema (version) VALUES ($1)', [version]);
    },
    removeSchemaVersion: async (version) => {
      await query('DELETE FROM unstuck_schema WHERE version = $1', [version]);
    },
    rows: async (session) =>
      (await query('SELECT body FROM unstuck_messages WHERE session = $1 ORDER BY position', [session])).map(
        (row) => row['body'] as string,
      ),
    childTarget: ['postgres', server.url],
  };
}

if (skip !== undefined) {
  it('PostgreSQL store tests', { skip }, () => undefined);
} else {
  before(async () => {
    server = await startPostgres();
    pool = new pg.Pool({ connectionString: server.url, max: 2 });
    child = await bundleDatabaseChild('database-crash-child.ts');
  });
  after(async () => {
    await pool?.end();
    await child?.dispose();
    await server?.stop();
  });

  sessionStoreContract(
    'PostgreSQL',
    async () => {
      const session = `contract-${++sessions}`;
      return { open: () => createPostgresStore(server.url, { session }), dispose: async () => undefined };
    },
    { propertyRuns: 100 },
  );

  databaseStoreBehaviour('PostgreSQL', fixture, () => child.path);
}

describe('PostgreSQL store: bad connections', { skip }, () => {
  const failsWith = (code: string, pattern: RegExp) => (error: unknown) => {
    assert.ok(isUnstuckError(error) && error.code === code, `expected ${code}, got ${String(error)}`);
    assert.match(error.message, pattern);
    assert.doesNotMatch(
      `${error.message} ${error.file}`,
      /secret-password|test-password-not-secret/,
      'the password is never in the message or the place',
    );
    return true;
  };

  it('an unreachable server is one IO error naming where, without the password', async () => {
    const port = await freePort();
    const store = createPostgresStore(`postgres://someone:secret-password@127.0.0.1:${port}/sessions`, {
      session: 'x',
    });
    await assert.rejects(store.load(), failsWith('IO', /^cannot reach the PostgreSQL server: ECONNREFUSED$/));
    await assert.rejects(
      store.load(),
      (error: unknown) => isUnstuckError(error) && error.file === `postgres://someone@127.0.0.1:${port}/sessions#x`,
    );
    await assert.rejects(
      store.append!([{ role: 'user', content: 'kept by the caller' }]),
      failsWith('IO', /cannot reach the PostgreSQL server/),
    );
    await store.close();
  });

  it('a wrong password is one CONFIG error saying the login was refused, and nothing is written', async () => {
    const store = createPostgresStore(server.urlFor({ password: 'secret-password' }), { session: 'wrong-login' });
    await assert.rejects(
      store.load(),
      failsWith('CONFIG', /refused the login: password authentication failed for user "unstuck"/),
    );
    await store.close();
    assert.deepEqual(await fixture().rows('wrong-login'), []);
  });

  it('a database that does not exist is one CONFIG error', async () => {
    const store = createPostgresStore(server.urlFor({ database: 'missing' }), { session: 'x' });
    await assert.rejects(store.load(), failsWith('CONFIG', /database "missing" does not exist/));
    await store.close();
  });

  it('creates its schema once on a fresh database when many stores start at once, and leaves a pool it was given open', async () => {
    await pool.query('CREATE DATABASE fresh');
    const shared = new pg.Pool({ connectionString: server.urlFor({ database: 'fresh' }), max: 8 });
    try {
      const stores = Array.from({ length: 8 }, (_unused, index) =>
        createPostgresStore(shared, { session: `s${index}` }),
      );
      await Promise.all(stores.map((store, index) => store.append!([{ role: 'user', content: `store ${index}` }])));
      await Promise.all(stores.map((store) => store.close()));
      const versions = await shared.query('SELECT version FROM unstuck_schema');
      assert.deepEqual(versions.rows, [{ version: 1 }]);
      assert.equal((await shared.query('SELECT count(*)::int AS n FROM unstuck_messages')).rows[0].n, 8);
    } finally {
      await shared.end();
    }
  });
});
