import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createSqliteStore } from '../../src/session/index.js';
import { temporaryDirectory } from './helpers.js';
import { sessionStoreContract } from './store-contract.js';

sessionStoreContract('SQLite', async () => {
  const directory = await temporaryDirectory();
  return { open: () => createSqliteStore(join(directory.path, 'sessions.db'), { session: 'contract' }), dispose: directory.dispose };
}, { propertyRuns: 150 });
