import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { SessionStore } from '../../src/session/index.js';
import {
  createJournalStore,
  createMemoryStore,
  createTranscriptStore,
  formatJournal,
  formatTranscript,
  parseJournal,
  parseTranscript,
} from '../../src/session/index.js';
import { asJson, temporaryDirectory, toolLoopSession } from './helpers.js';
import { sessionStoreContract } from './store-contract.js';

function fileFixture(open: (path: string) => SessionStore, name: string) {
  return async () => {
    const directory = await temporaryDirectory();
    return { open: () => open(join(directory.path, name)), dispose: directory.dispose };
  };
}

sessionStoreContract(
  'memory',
  async () => {
    // One store object: a memory store's place is the object itself.
    const store = createMemoryStore();
    return { open: () => store, dispose: async () => undefined };
  },
  { propertyRuns: 200 },
);

sessionStoreContract(
  'Markdown transcript',
  fileFixture((path) => createTranscriptStore(path), 'session.md'),
  { propertyRuns: 150 },
);

sessionStoreContract(
  'Markdown transcript, split into segments',
  fileFixture((path) => createTranscriptStore(path, { segmentMessages: 3 }), 'session.md'),
  { propertyRuns: 100 },
);

sessionStoreContract(
  'JSONL journal',
  fileFixture((path) => createJournalStore(path), 'session.jsonl'),
  { propertyRuns: 150 },
);

describe('file stores, large sessions', () => {
  it('save and load 9,000 messages exactly (written in chunks and segments, read in groups, one message not role-first)', async () => {
    const directory = await temporaryDirectory();
    const messages = asJson(toolLoopSession(2300)); // 9,201 messages: more than one encoding group (8,192) and parse group (4,096)
    messages[5000] = {
      content: 'role is not the first key: this group is stringified message by message',
      role: 'user',
    };
    try {
      const stores = [
        createJournalStore(join(directory.path, 'big.jsonl')),
        createTranscriptStore(join(directory.path, 'big.md')),
        createTranscriptStore(join(directory.path, 'one.md'), { segmentMessages: 20_000 }),
      ];
      for (const store of stores) {
        await store.save(messages);
        assert.deepEqual(await store.load(), { messages, problems: [] });
        await store.close();
      }
      assert.deepEqual(parseTranscript(formatTranscript(messages)), { messages, problems: [] });
      assert.deepEqual(parseJournal(formatJournal(messages)), { messages, problems: [] });
    } finally {
      await directory.dispose();
    }
  });

  it('lists a corrupt line in a later group of a long journal by its number, and loads every other line', async () => {
    const directory = await temporaryDirectory();
    const path = join(directory.path, 'big.jsonl');
    const messages = asJson(toolLoopSession(2300));
    try {
      const lines = formatJournal(messages).split('\n');
      lines[6000] = '{"role":"user","content":"cut';
      await writeFile(path, lines.join('\n'));
      const loaded = await createJournalStore(path).load();
      assert.deepEqual(
        loaded.problems.map((problem) => problem.line),
        [6001],
      );
      assert.deepEqual(
        loaded.messages,
        messages.filter((_message, index) => index !== 6000),
      );
    } finally {
      await directory.dispose();
    }
  });
});
