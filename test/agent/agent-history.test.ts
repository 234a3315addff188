import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAgentHistory } from '../../src/agent/agent-history.js';
import type { Message, ProfileName } from '../../src/core/index.js';
import { check } from '../../src/core/index.js';
import type { SessionStore } from '../../src/session/index.js';

type Write = { op: 'save' | 'append'; messages: Message[] };

/** A store that records every write and can be told to fail the next ones. */
function fakeStore(initial: Message[] = [], options: { append?: boolean } = {}) {
  const writes: Write[] = [];
  let loads = 0;
  let failing: Error | undefined;
  const write = (op: Write['op']) => async (messages: readonly Message[]) => {
    if (failing !== undefined) throw failing;
    writes.push({ op, messages: structuredClone([...messages]) });
  };
  const store: SessionStore = {
    load: async () => {
      loads += 1;
      if (failing !== undefined) throw failing;
      return { messages: structuredClone(initial), problems: [] };
    },
    save: write('save'),
    close: async () => undefined,
    ...(options.append === false ? {} : { append: write('append') }),
  };
  return {
    store,
    writes,
    loads: () => loads,
    fail: (error: Error | undefined) => {
      failing = error;
    },
  };
}

const historyOn = (store: SessionStore, profile: ProfileName = 'deepseek') =>
  createAgentHistory({ store, profile, model: 'deepseek-chat', thinking: false });

const call = (id: string) => ({ id, type: 'function', function: { name: 'echo', arguments: '{}' } }) as const;

describe('agent history: what is saved when', () => {
  test('open loads once, repairs, and saves the repaired history whole; a valid one is not written', async () => {
    const broken = fakeStore([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [call('call_1')] },
    ]);
    const history = historyOn(broken.store);
    assert.equal(history.opened, false);
    const opened = await history.open();
    await history.open();
    assert.equal(broken.loads(), 1);
    assert.equal(history.opened, true);
    assert.ok(opened.changes.length > 0);
    assert.deepEqual(
      broken.writes.map((write) => [write.op, write.messages.length]),
      [['save', 3]],
    );

    const valid = fakeStore([{ role: 'user', content: 'hi' }]);
    await historyOn(valid.store).open();
    assert.deepEqual(valid.writes, []);
  });

  test('a failed open is tried again on the next call', async () => {
    const fake = fakeStore([{ role: 'user', content: 'hi' }]);
    const history = historyOn(fake.store);
    fake.fail(new Error('disk gone'));
    await assert.rejects(history.open(), /disk gone/);
    assert.equal(history.opened, false);
    fake.fail(undefined);
    await history.open();
    assert.equal(fake.loads(), 2);
    assert.deepEqual(history.messages, [{ role: 'user', content: 'hi' }]);
  });

  test('appends go to the store as appends of the new messages only; a store without append gets the whole history', async () => {
    for (const append of [true, false]) {
      const fake = fakeStore([], { append });
      const history = historyOn(fake.store);
      await history.open();
      await history.appendUser('question');
      await history.append({ role: 'assistant', content: 'answer' });
      assert.deepEqual(
        fake.writes.map((write) => [write.op, write.messages.map((message) => message.content)]),
        append
          ? [
              ['append', ['question']],
              ['append', ['answer']],
            ]
          : [
              ['save', ['question']],
              ['save', ['question', 'answer']],
            ],
      );
    }
  });

  test('after a repair the next save rewrites the session instead of appending', async () => {
    const fake = fakeStore([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: '' },
    ]);
    const history = historyOn(fake.store);
    await history.open();
    fake.writes.length = 0;
    history.messages.push({ role: 'assistant', content: null, tool_calls: [call('call_9')] });
    const repaired = history.repairWhole();
    assert.equal(repaired.changed, true);
    assert.equal(fake.writes.length, 0, 'the repair is kept in memory until the next save');
    await history.appendUser('two');
    assert.equal(fake.writes.length, 1);
    assert.equal(fake.writes[0]?.op, 'save');
    assert.deepEqual(check(fake.writes[0]!.messages, { profile: 'deepseek', model: 'deepseek-chat' }), []);
  });

  test("a user's message is never removed: the strongest repair keeps one that repeats the one before it", async () => {
    const fake = fakeStore([
      { role: 'user', content: 'first' },
      { role: 'assistant', content: null, tool_calls: [call('call_0')] },
      { role: 'tool', tool_call_id: 'call_0', content: 'a' },
      { role: 'user', content: 'again' },
      { role: 'assistant', content: null, tool_calls: [call('call_0')] },
      { role: 'tool', tool_call_id: 'call_0', content: 'b' },
      { role: 'user', content: 'again' },
    ]);
    // OpenAI allows a call id again in a later turn; the strongest repair (a heal) makes ids unique
    // and would fold repeated user messages, but never the user's.
    const history = historyOn(fake.store, 'openai');
    await history.open();
    await history.appendUser('again');
    const changes = await history.heal();
    assert.ok(changes.some((change) => change.kind === 'id-remapped'));
    assert.deepEqual(
      history.messages.filter((message) => message.role === 'user').map((message) => message.content),
      ['first', 'again', 'again', 'again'],
    );
    assert.equal(fake.writes.at(-1)?.op, 'save', 'the healed history is saved whole');
  });
});

describe('agent history: a tool block is saved whole', () => {
  test('the results and the hints after them reach the store in one write', async () => {
    const fake = fakeStore();
    const history = historyOn(fake.store);
    await history.open();
    await history.appendUser('go');
    await history.append({ role: 'assistant', content: null, tool_calls: [call('call_1'), call('call_2')] });
    const results: Message[] = [
      { role: 'tool', tool_call_id: 'call_1', content: 'one' },
      { role: 'tool', tool_call_id: 'call_2', content: 'two' },
    ];
    history.openBlock(Promise.resolve(results));
    const writes = fake.writes.length;
    await history.closeBlock([...results, { role: 'system', content: '[loop guard] hint' }]);
    assert.equal(fake.writes.length, writes + 1);
    assert.deepEqual(
      fake.writes.at(-1)?.messages.map((message) => message.content),
      ['one', 'two', '[loop guard] hint'],
    );
  });

  test('nothing else is added while a block is open', async () => {
    const history = historyOn(fakeStore().store);
    await history.open();
    await history.appendUser('go');
    await history.append({ role: 'assistant', content: null, tool_calls: [call('call_1')] });
    history.openBlock(new Promise<Message[]>(() => undefined));
    await assert.rejects(history.append({ role: 'assistant', content: 'too early' }), /tool block is open/);
    await assert.rejects(history.appendUser('too early'), /tool block is open/);
    assert.equal(history.messages.length, 2);
  });

  test('settle answers an open block with its results, then repairs and saves: the history is whole', async () => {
    const fake = fakeStore();
    const history = historyOn(fake.store);
    await history.open();
    await history.appendUser('go');
    await history.append({ role: 'assistant', content: null, tool_calls: [call('call_1')] });
    history.openBlock(Promise.resolve([{ role: 'tool', tool_call_id: 'call_1', content: 'cancelled' }]));
    await history.settle();
    await history.settle();
    assert.deepEqual(
      history.messages.map((message) => message.role),
      ['user', 'assistant', 'tool'],
    );
    assert.deepEqual(fake.writes.at(-1)?.messages.at(-1), {
      role: 'tool',
      tool_call_id: 'call_1',
      content: 'cancelled',
    });
    assert.equal(fake.writes.filter((write) => write.messages.some((m) => m.role === 'tool')).length, 1);
  });

  test('settle after a turn that stopped with a call unanswered repairs it before saving', async () => {
    const fake = fakeStore([], { append: false });
    const history = historyOn(fake.store);
    await history.open();
    await history.appendUser('go');
    history.messages.push({ role: 'assistant', content: null, tool_calls: [call('call_1')] });
    await history.settle();
    assert.deepEqual(check(fake.writes.at(-1)!.messages, { profile: 'deepseek', model: 'deepseek-chat' }), []);
  });
});

describe('agent history: the repair before each request', () => {
  test("within a turn only the turn's messages are checked, and an id reused from an earlier turn is still caught", async () => {
    const fake = fakeStore([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: null, tool_calls: [call('call_0')] },
      { role: 'tool', tool_call_id: 'call_0', content: 'a' },
      { role: 'assistant', content: 'done' },
    ]);
    const history = historyOn(fake.store);
    await history.open();
    await history.appendUser('two');
    assert.equal(history.prepareRequest().changed, false);
    await history.append({ role: 'assistant', content: null, tool_calls: [call('call_0')] });
    history.openBlock(Promise.resolve([]));
    await history.closeBlock([{ role: 'tool', tool_call_id: 'call_0', content: 'b' }]);
    const prepared = history.prepareRequest();
    assert.equal(prepared.changed, true, 'DeepSeek wants call ids unique across the request');
    assert.ok(prepared.changes.some((change) => change.kind === 'id-remapped'));
    assert.deepEqual(check(history.messages, { profile: 'deepseek', model: 'deepseek-chat', scope: 'request' }), []);
  });
});

describe('agent history: a compaction replaces the history', () => {
  test('replace saves the new history whole; a failed save puts the old one back and says why', async () => {
    const fake = fakeStore([{ role: 'user', content: 'one' }]);
    const history = historyOn(fake.store);
    await history.open();
    const before = history.messages;
    fake.fail(new Error('no space left'));
    await assert.rejects(
      history.replace([{ role: 'user', content: 'summary' }]),
      /could not save the session: no space left/,
    );
    assert.equal(history.messages, before);
    fake.fail(undefined);
    await history.appendUser('two');
    assert.deepEqual(
      fake.writes.map((write) => [write.op, write.messages.length]),
      [['append', 1]],
      'after the failed replace, the store still gets only what it lacks',
    );
    await history.replace([{ role: 'user', content: 'summary' }]);
    assert.deepEqual(fake.writes.at(-1), { op: 'save', messages: [{ role: 'user', content: 'summary' }] });
  });
});
