import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { PostgresServer } from '../support/postgres-server.js';
import { postgresSkipReason, startPostgres } from '../support/postgres-server.js';
import { bundleDatabaseChild } from './database-bundle.js';
import { multiNodeRun } from './database-multi-node.js';
import { temporaryDirectory } from './helpers.js';

/** The short multi-node run on both database stores (30 s each: `npm run multi-node:db`). */
const DURATION_MS = 4000;
const skipPostgres = postgresSkipReason();
let child: Awaited<ReturnType<typeof bundleDatabaseChild>>;
let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
let server: PostgresServer | undefined;

before(async () => {
  child = await bundleDatabaseChild('database-node-child.ts');
  directory = await temporaryDirectory();
  if (skipPostgres === undefined) server = await startPostgres();
});
after(async () => {
  await server?.stop();
  await directory?.dispose();
  await child?.dispose();
});

describe('four processes running agent turns on three sessions through one database', () => {
  it('SQLite file: no lost turn, no interleaved turn, every session valid', async () => {
    await multiNodeRun({ child: child.path, kind: 'sqlite', target: join(directory.path, 'nodes.db'), nodes: 4, sessions: 3, durationMs: DURATION_MS, prefix: 'sqlite' });
  });

  it('PostgreSQL: no lost turn, no interleaved turn, every session valid', { skip: skipPostgres }, async () => {
    await multiNodeRun({ child: child.path, kind: 'postgres', target: server!.url, nodes: 4, sessions: 3, durationMs: DURATION_MS, prefix: 'postgres' });
  });
});
