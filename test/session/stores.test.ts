import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createJournalStore, createMemoryStore, createTranscriptStore } from '../../src/session/index.js';
import type { SessionStore } from '../../src/session/index.js';
import { asJson, temporaryDirectory, toolLoopSession } from './helpers.js';
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

describe('file stores, large sessions', () => {
  it('save and load 2,500 messages exactly (a journal written in chunks, a transcript in segments)', async () => {
    const directory = await temporaryDirectory();
    const messages = asJson(toolLoopSession(625)); // 2,501 messages
    try {
      for (const store of [createJournalStore(join(directory.path, 'big.jsonl')), createTranscriptStore(join(directory.path, 'big.md'))]) {
        await store.save(messages);
        assert.deepEqual(await store.load(), { messages, problems: [] });
        await store.close();
      }
    } finally {
      await directory.dispose();
    }
  });
});
