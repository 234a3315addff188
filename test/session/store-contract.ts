import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Message } from '../../src/core/messages.js';
import type { SessionStore } from '../../src/session/index.js';
import { adversarialSession, asJson, toolLoopSession } from './helpers.js';

/**
 * What every SessionStore promises, run against each implementation. `open` gives a store over
 * one session (a fresh store object on the same place each call, for the file stores), and
 * `dispose` removes the place.
 */
export interface StoreFixture {
  open(): SessionStore;
  dispose(): Promise<void>;
}

export function sessionStoreContract(
  name: string,
  create: () => Promise<StoreFixture>,
  options: { propertyRuns: number },
): void {
  describe(`SessionStore contract: ${name}`, () => {
    async function withStore(body: (fixture: StoreFixture, store: SessionStore) => Promise<void>): Promise<void> {
      const fixture = await create();
      const store = fixture.open();
      try {
        await body(fixture, store);
      } finally {
        await store.close();
        await fixture.dispose();
      }
    }

    it('loads an empty session before the first save', async () => {
      await withStore(async (_fixture, store) => {
        assert.deepEqual(await store.load(), { messages: [], problems: [] });
      });
    });

    it('gives back exactly what it was given, through a new store on the same place', async () => {
      await withStore(async (fixture, store) => {
        const messages = toolLoopSession(5);
        await store.save(messages);
        await store.close();
        const again = fixture.open();
        try {
          assert.deepEqual(await again.load(), { messages: asJson(messages), problems: [] });
        } finally {
          await again.close();
        }
      });
    });

    it('replaces the whole session on save: a shorter save loads shorter', async () => {
      await withStore(async (_fixture, store) => {
        await store.save(toolLoopSession(40));
        const short = toolLoopSession(1, 2).slice(0, 3);
        await store.save(short);
        assert.deepEqual(await store.load(), { messages: asJson(short), problems: [] });
        await store.save([]);
        assert.deepEqual(await store.load(), { messages: [], problems: [] });
      });
    });

    it('appends after what is there, and a save after appends replaces all of it', async () => {
      await withStore(async (_fixture, store) => {
        if (store.append === undefined) return;
        const messages = toolLoopSession(2);
        await store.append(messages.slice(0, 3));
        await store.append(messages.slice(3));
        await store.append([]);
        assert.deepEqual((await store.load()).messages, asJson(messages));
        await store.save(messages.slice(0, 1));
        await store.append(messages.slice(1, 2));
        assert.deepEqual((await store.load()).messages, asJson(messages.slice(0, 2)));
      });
    });

    it('never drops or repairs a message it was given (a failed turn keeps the user message)', async () => {
      await withStore(async (_fixture, store) => {
        const history: Message[] = [
          ...toolLoopSession(1),
          { role: 'user', content: 'the turn that failed with a 400' },
          { role: 'user', content: 'and the retry' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'run', arguments: '{' } }],
          },
        ];
        await store.save(history);
        assert.deepEqual((await store.load()).messages, asJson(history));
        if (store.append !== undefined) {
          await store.append([{ role: 'user', content: 'typed while the request failed' }]);
          const loaded = (await store.load()).messages;
          assert.equal(loaded.length, history.length + 1);
          assert.deepEqual(loaded.at(-1), { role: 'user', content: 'typed while the request failed' });
        }
      });
    });

    it('does not share objects with the caller', async () => {
      await withStore(async (_fixture, store) => {
        const messages: Message[] = [{ role: 'user', content: 'original' }];
        await store.save(messages);
        messages[0]!.content = 'changed after save';
        const loaded = await store.load();
        assert.equal(loaded.messages[0]!.content, 'original');
        loaded.messages[0]!.content = 'changed after load';
        assert.equal((await store.load()).messages[0]!.content, 'original');
      });
    });

    it('round-trips any messages exactly (adversarial content)', async () => {
      await withStore(async (_fixture, store) => {
        await fc.assert(
          fc.asyncProperty(adversarialSession, async (messages) => {
            await store.save(messages);
            const loaded = await store.load();
            assert.deepEqual(loaded.problems, []);
            assert.deepStrictEqual(loaded.messages, messages);
          }),
          { numRuns: options.propertyRuns, seed: 20261130 },
        );
      });
    });
  });
}
