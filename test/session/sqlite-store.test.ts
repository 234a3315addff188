import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { isUnstuckError } from '../../src/core/errors.js';
import { createSqliteStore } from '../../src/session/index.js';
import { bundleDatabaseChild } from './database-bundle.js';
import type { DatabaseFixture } from './database-store-behaviour.js';
import { databaseStoreBehaviour } from './database-store-behaviour.js';
import { temporaryDirectory } from './helpers.js';
import { sessionStoreContract } from './store-contract.js';

let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
let child: Awaited<ReturnType<typeof bundleDatabaseChild>>;
before(async () => {
  directory = await temporaryDirectory();
  child = await bundleDatabaseChild('database-crash-child.ts');
});
after(async () => {
  await child.dispose();
  await directory.dispose();
});

sessionStoreContract(
  'SQLite',
  async () => {
    const place = await temporaryDirectory();
    return {
      open: () => createSqliteStore(join(place.path, 'sessions.db'), { session: 'contract' }),
      dispose: place.dispose,
    };
  },
  { propertyRuns: 150 },
);

/** One database file for the behaviour tests, reached directly for what an operator would do. */
function fixture(): DatabaseFixture {
  const path = join(directory.path, 'behaviour.db');
  const direct = <T>(body: (database: Database.Database) => T): T => {
    const database = new Database(path, { timeout: 5000 });
    try {
      return body(database);
    } finally {
      database.close();
    }
  };
  return {
    open: (session, options = {}) => createSqliteStore(path, { ...options, session }),
    setBody: async (session, position, body) => {
      direct((database) =>
        database
          .prepare('UPDATE unstuck_messages SET body = ? WHERE session = ? AND position = ?')
          .run(body, session, position),
      );
    },
    setLease: async (session, holder, ms) => {
      direct((database) =>
        database
          .prepare('UPDATE unstuck_sessions SET lease_holder = ?, lease_expires = ? WHERE id = ?')
          .run(holder, Date.now() + ms, session),
      );
    },
    addSchemaVersion: async (version) => {
      direct((database) => database.prepare('INSERT INTO unstuck_schema (version) VALUES (?)').run(version));
    },
    removeSchemaVersion: async (version) => {
      direct((database) => database.prepare('DELETE FROM unstuck_schema WHERE version = ?').run(version));
    },
    rows: async (session) =>
      direct((database) =>
        (
          database.prepare('SELECT body FROM unstuck_messages WHERE session = ? ORDER BY position').all(session) as {
            body: string;
          }[]
        ).map((row) => row.body),
      ),
    childTarget: ['sqlite', path],
  };
}

databaseStoreBehaviour('SQLite', fixture, () => child.path);

describe('SQLite store: bad files', () => {
  it('a file that is not a SQLite database is one IO error, and the file is left as it was', async () => {
    const path = join(directory.path, 'notes.db');
    await writeFile(path, 'these are my notes, not a database\n'.repeat(200));
    const store = createSqliteStore(path, { session: 'x' });
    await assert.rejects(
      store.load(),
      (error: unknown) =>
        isUnstuckError(error) &&
        error.code === 'IO' &&
        /^cannot use the SQLite database: file is not a database$/.test(error.message) &&
        /^sqlite:.*notes\.db#x$/.test(error.file ?? ''),
    );
    await assert.rejects(
      store.save([{ role: 'user', content: 'x' }]),
      (error: unknown) => isUnstuckError(error) && error.code === 'IO',
    );
    await store.close();
    assert.equal(await readFile(path, 'utf8'), 'these are my notes, not a database\n'.repeat(200));
  });

  it('a database in a directory that does not exist is one IO error', async () => {
    const store = createSqliteStore(join(directory.path, 'missing', 'sessions.db'));
    await assert.rejects(
      store.load(),
      (error: unknown) =>
        isUnstuckError(error) &&
        error.code === 'IO' &&
        /^cannot open the SQLite database: /.test(error.message) &&
        /missing\/sessions\.db#default$/.test(error.file ?? ''),
    );
    await store.close();
  });

  it('creates its schema once when many processes open a new file at once', async () => {
    const path = join(directory.path, 'fresh.db');
    const children = Array.from(
      { length: 4 },
      (_unused, index) =>
        new Promise<string>((resolve, reject) => {
          const process_ = spawn(process.execPath, [child.path, 'append', 'sqlite', path, `s${index}`, '0'], {
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let errors = '';
          process_.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
          process_.stdout.once('data', () => {
            process_.kill('SIGKILL');
            resolve(errors);
          });
          process_.on('close', (code) =>
            code === null ? undefined : reject(new Error(`child ${index} ended ${code}: ${errors}`)),
          );
        }),
    );
    assert.deepEqual(await Promise.all(children), ['', '', '', '']);
    const database = new Database(path);
    try {
      assert.deepEqual(database.prepare('SELECT version FROM unstuck_schema').all(), [{ version: 1 }]);
    } finally {
      database.close();
    }
  });
});

describe('the database drivers are optional peers', () => {
  it('unstuck/session loads without them, and a database store says which package it needs (CONFIG)', async () => {
    const place = await temporaryDirectory();
    try {
      // Bundled into a temporary directory: no node_modules above it, so neither driver resolves.
      const { build } = await import('esbuild');
      const outfile = join(place.path, 'missing.mjs');
      await build({
        entryPoints: [fileURLToPath(new URL('./database-driver-missing-child.ts', import.meta.url))],
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        outfile,
        logLevel: 'silent',
        external: ['better-sqlite3', 'pg'],
      });
      const output = await new Promise<string>((resolve, reject) => {
        const process_ = spawn(process.execPath, [outfile], { cwd: place.path, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let errors = '';
        process_.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        process_.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
        process_.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${errors}`))));
      });
      assert.equal(
        output,
        'CONFIG createSqliteStore needs the better-sqlite3 package (npm install better-sqlite3@12)\nCONFIG createPostgresStore needs the pg package (npm install pg@8)\n',
      );
    } finally {
      await place.dispose();
    }
  });
});
