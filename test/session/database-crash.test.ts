import { join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import { useDatabaseRig } from './database-bundle.js';
import { databaseCrashRun, postgresCrashTarget } from './database-crash.js';

/**
 * The short crash run on both database stores (the long one, 220 kills each: `npm run crash:db`).
 * SQLite and PostgreSQL run side by side: this machine has two cores.
 */
const KILLS = 50;
const rig = useDatabaseRig('database-crash-child.ts');
const { skipPostgres } = rig;

describe('a database writer killed at random moments', { concurrency: 2 }, () => {
  it(`SQLite: every load is the write before the kill or the one in flight, whole (${2 * KILLS} kills)`, async () => {
    const target = join(rig.directory.path, 'crash.db');
    await databaseCrashRun({
      child: rig.child.path,
      kind: 'sqlite',
      mode: 'save',
      target,
      session: 'save',
      kills: KILLS,
      seed: 11,
    });
    await databaseCrashRun({
      child: rig.child.path,
      kind: 'sqlite',
      mode: 'append',
      target,
      session: 'append',
      kills: KILLS,
      seed: 12,
    });
  });

  it(`PostgreSQL: every load is the write before the kill or the one in flight, whole (${2 * KILLS} kills)`, {
    skip: skipPostgres,
  }, async () => {
    const pool = new pg.Pool({ connectionString: rig.server!.url, max: 1 });
    try {
      const { target, settle } = postgresCrashTarget(rig.server!.url, (text) => pool.query(text));
      await databaseCrashRun({
        child: rig.child.path,
        kind: 'postgres',
        mode: 'save',
        target,
        session: 'save',
        kills: KILLS,
        seed: 21,
        settle,
      });
      await databaseCrashRun({
        child: rig.child.path,
        kind: 'postgres',
        mode: 'append',
        target,
        session: 'append',
        kills: KILLS,
        seed: 22,
        settle,
      });
    } finally {
      await pool.end();
    }
  });
});
