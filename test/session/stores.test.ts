import { join } from 'node:path';
import { createJournalStore, createMemoryStore, createTranscriptStore } from '../../src/session/index.js';
import type { SessionStore } from '../../src/session/index.js';
import { temporaryDirectory } from './helpers.js';
import { sessionStoreContract } from './store-contract.js';

function fileFixture(open: (path: string) => SessionStore, name: string) {
  return async () => {
    const directory = await temporaryDirectory();
    return { open: () => open(join(directory.path, name)), dispose: directory.dispose };
  };
}

sessionStoreContract('memory', async () => {
  // One store object: a memory store's place is the object itself.
  const store = createMemoryStore();
  return { open: () => store, dispose: async () => undefined };
}, { propertyRuns: 200 });

sessionStoreContract('Markdown transcript', fileFixture((path) => createTranscriptStore(path), 'session.md'), { propertyRuns: 150 });

sessionStoreContract('Markdown transcript, split into segments', fileFixture((path) => createTranscriptStore(path, { segmentMessages: 3 }), 'session.md'), { propertyRuns: 100 });

sessionStoreContract('JSONL journal', fileFixture((path) => createJournalStore(path), 'session.jsonl'), { propertyRuns: 150 });
