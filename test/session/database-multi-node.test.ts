import { join } from 'node:path';
import { describe, it } from 'node:test';
import { useDatabaseRig } from './database-bundle.js';
import { multiNodeRun } from './database-multi-node.js';

/** The short multi-node run on both database stores (30 s each: `npm run multi-node:db`). */
const DURATION_MS = 4000;
const rig = useDatabaseRig('database-node-child.ts');
const { skipPostgres } = rig;

describe('four processes running agent turns on three sessions through one database', () => {
  it('SQLite file: no lost turn, no interleaved turn, every session valid', async () => {
    await multiNodeRun({
      child: rig.child.path,
      kind: 'sqlite',
      target: join(rig.directory.path, 'nodes.db'),
      nodes: 4,
      sessions: 3,
      durationMs: DURATION_MS,
      prefix: 'sqlite',
    });
  });

  it('PostgreSQL: no lost turn, no interleaved turn, every session valid', { skip: skipPostgres }, async () => {
    await multiNodeRun({
      child: rig.child.path,
      kind: 'postgres',
      target: rig.server!.url,
      nodes: 4,
      sessions: 3,
      durationMs: DURATION_MS,
      prefix: 'postgres',
    });
  });
});
