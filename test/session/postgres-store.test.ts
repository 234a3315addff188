import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPostgresStore } from '../../src/session/index.js';
import type { PostgresServer } from '../support/postgres-server.js';
import { postgresSkipReason, startPostgres } from '../support/postgres-server.js';
import { sessionStoreContract } from './store-contract.js';

const skip = postgresSkipReason();
let server: PostgresServer;
let sessions = 0;

if (skip !== undefined) {
  it('PostgreSQL store tests', { skip }, () => undefined);
} else {
  before(async () => {
    server = await startPostgres();
  });
  after(async () => {
    await server?.stop();
  });

  sessionStoreContract('PostgreSQL', async () => {
    const session = `contract-${(sessions += 1)}`;
    return { open: () => createPostgresStore(server.url, { session }), dispose: async () => undefined };
  }, { propertyRuns: 100 });
}
