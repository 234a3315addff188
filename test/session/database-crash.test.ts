import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { PostgresServer } from '../support/postgres-server.js';
import { postgresSkipReason, startPostgres } from '../support/postgres-server.js';
import { bundleDatabaseChild } from './database-bundle.js';
import { databaseCrashRun, postgresCrashTarget } from './database-crash.js';
import { temporaryDirectory } from './helpers.js';

/**
 * The short crash run on both database stores (the long one, 220 kills each: `npm run crash:db`).
 * SQLite and PostgreSQL run side by side: this machine has two cores.
 */
const KILLS = 50;
const skipPostgres = postgresSkipReason();
let child: Awaited<ReturnType<typeof bundleDatabaseChild>>;
let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
let server: PostgresServer | undefined;

before(async () => {
  child = await bundleDatabaseChild('database-crash-child.ts');
  directory = await temporaryDirectory();
  if (skipPostgres === undefined) server = await startPostgres();
});
after(async () => {
  await server?.stop();
  await directory?.dispose();
  await child?.dispose();
});

describe('a database writer killed at random moments', { concurrency: 2 }, () => {
  it(`SQLite: every load is the write before the kill or the one in flight, whole (${2 * KILLS} kills)`, async () => {
    const target = join(directory.path, 'crash.db');
    await databaseCrashRun({ child: child.path, kind: 'sqlite', mode: 'save', target, session: 'save', kills: KILLS, seed: 11 });
    await databaseCrashRun({ child: child.path, kind: 'sqlite', mode: 'append', target, session: 'append', kills: KILLS, seed: 12 });
  });

  it(`PostgreSQL: every load is the write before the kill or the one in flight, whole (${2 * KILLS} kills)`, { skip: skipPostgres }, async () => {
    const pool = new pg.Pool({ connectionString: server!.url, max: 1 });
    try {
      const { target, settle } = postgresCrashTarget(server!.url, (text) => pool.query(text));
      await databaseCrashRun({ child: child.path, kind: 'postgres', mode: 'save', target, session: 'save', kills: KILLS, seed: 21, settle });
      await databaseCrashRun({ child: child.path, kind: 'postgres', mode: 'append', target, session: 'append', kills: KILLS, seed: 22, settle });
    } finally {
      await pool.end();
    }
  });
});
