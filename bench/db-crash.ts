/**
 * `npm run crash:db`: the long crash run on both database stores, 220 kills each (110 while
 * saving whole sessions, 110 while appending), reporting how many landed while a write was in
 * flight. The test suite runs a short version (test/session/database-crash.test.ts).
 */
import { join } from 'node:path';
import pg from 'pg';
import { bundleDatabaseChild } from '../test/session/database-bundle.js';
import { databaseCrashRun, postgresCrashTarget } from '../test/session/database-crash.js';
import { temporaryDirectory } from '../test/session/helpers.js';
import { startPostgres } from '../test/support/postgres-server.js';

const kills = Number(process.argv[2] ?? 110);
const child = await bundleDatabaseChild('database-crash-child.ts');
const directory = await temporaryDirectory();
const server = await startPostgres();
const pool = new pg.Pool({ connectionString: server.url, max: 1 });
try {
  const { target, settle } = postgresCrashTarget(server.url, (text) => pool.query(text));
  const sqlite = join(directory.path, 'crash.db');
  const reports = await Promise.all([
    (async () => [
      await databaseCrashRun({
        child: child.path,
        kind: 'sqlite',
        mode: 'save',
        target: sqlite,
        session: 'save',
        kills,
        seed: 101,
      }),
      await databaseCrashRun({
        child: child.path,
        kind: 'sqlite',
        mode: 'append',
        target: sqlite,
        session: 'append',
        kills,
        seed: 102,
      }),
    ])(),
    (async () => [
      await databaseCrashRun({
        child: child.path,
        kind: 'postgres',
        mode: 'save',
        target,
        session: 'save',
        kills,
        seed: 201,
        settle,
      }),
      await databaseCrashRun({
        child: child.path,
        kind: 'postgres',
        mode: 'append',
        target,
        session: 'append',
        kills,
        seed: 202,
        settle,
      }),
    ])(),
  ]);
  for (const report of reports.flat()) {
    console.log(
      `${report.kind.padEnd(8)} ${report.mode.padEnd(6)} ${report.kills} kills, ${report.inFlight} with the write in flight committed, every load whole (${(report.milliseconds / 1000).toFixed(1)} s)`,
    );
  }
} finally {
  await pool.end();
  await server.stop();
  await directory.dispose();
  await child.dispose();
}
