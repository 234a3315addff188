import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AgentEvent } from '../../src/agent/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import {
  agentFor,
  assertEveryRequestValid,
  assertValidHistory,
  collect,
  lastEvent,
  recordingStore,
  userTexts,
} from './helpers.js';

function retries(events: readonly AgentEvent[]): Extract<AgentEvent, { type: 'retry' }>[] {
  return events.filter((event): event is Extract<AgentEvent, { type: 'retry' }> => event.type === 'retry');
}

describe('createAgent: transient failures are retried here, bounded', () => {
  test('429 (honouring Retry-After up to the cap), 500 and 503 are retried with growing delays', async () => {
    const emulator = createEmulator({
      script: [
        { fault: { status: 429, retryAfter: 3 } },
        { fault: { status: 500 } },
        { fault: { status: 503 } },
        { text: 'finally' },
      ],
    });
    const slept: number[] = [];
    const agent = agentFor(emulator, {
      retry: { baseDelayMs: 100, maxDelayMs: 2_000 },
      sleep: async (ms) => void slept.push(ms),
    });
    const events = await collect(agent.runTurn('hi'));
    assert.deepEqual(
      retries(events).map((event) => [event.attempt, event.delayMs]),
      [
        [1, 2_000],
        [2, 200],
        [3, 400],
      ],
    );
    assert.deepEqual(slept, [2_000, 200, 400]);
    assert.match(retries(events)[0]!.reason, /HTTP 429/);
    assert.equal(agent.messages.at(-1)?.content, 'finally');
    assert.equal(emulator.requests.length, 4);
  });

  test('a dropped connection mid-stream is retried without a duplicate user message or partial answer', async () => {
    const emulator = createEmulator({
      script: [
        { text: 'this answer is cut', stream: { chunkSize: 3 }, fault: { disconnectAfterChunks: 3 } },
        { text: 'complete answer' },
      ],
    });
    const store = recordingStore();
    const agent = agentFor(emulator, { session: store });
    const events = await collect(agent.runTurn('question'));
    assert.equal(retries(events).length, 1);
    assert.match(retries(events)[0]!.reason, /network failure/);
    assert.deepEqual(await store.current(), [
      { role: 'user', content: 'question' },
      { role: 'assistant', content: 'complete answer' },
    ]);
    // Both attempts sent the same history: one user message.
    for (const request of emulator.requests)
      assert.equal(request.body.messages.filter((message: { role: string }) => message.role === 'user').length, 1);
    const next = await collect(agent.runTurn('follow-up'));
    assert.equal(lastEvent(next)?.type === 'turn-end' && (lastEvent(next) as { reason: string }).reason, 'stop');
    assert.deepEqual(userTexts(agent.messages), ['question', 'follow-up']);
  });

  test('a fetch that fails outright (network down) is retried', async () => {
    const emulator = createEmulator();
    let calls = 0;
    const agent = agentFor(emulator, {
      fetch: (async (input: string | URL | Request, init?: RequestInit) => {
        calls += 1;
        if (calls <= 2) throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:1') });
        return emulator.fetch(input, init);
      }) as typeof fetch,
    });
    const events = await collect(agent.runTurn('hi'));
    assert.equal(retries(events).length, 2);
    assert.match(retries(events)[0]!.reason, /ECONNREFUSED/);
    assert.equal(lastEvent(events)?.type === 'turn-end' && (lastEvent(events) as { reason: string }).reason, 'stop');
    assert.deepEqual(userTexts(agent.messages), ['hi']);
  });

  test('a stall past the idle timeout is given up on and retried', async () => {
    const emulator = createEmulator({ script: [{ fault: { stall: 5_000 } }, { text: 'quick this time' }] });
    const agent = agentFor(emulator, { idleTimeoutMs: 30 });
    const events = await collect(agent.runTurn('hi'));
    assert.equal(retries(events).length, 1);
    assert.match(retries(events)[0]!.reason, /no data for 30 ms/);
    assert.equal(agent.messages.at(-1)?.content, 'quick this time');
  });

  test('a stall in the middle of a stream is also caught by the idle timeout', async () => {
    const emulator = createEmulator({
      script: [{ text: 'slow slow slow', stream: { chunkSize: 2, delayMs: 5_000 } }, { text: 'fast' }],
    });
    const agent = agentFor(emulator, { idleTimeoutMs: 30 });
    const events = await collect(agent.runTurn('hi'));
    assert.equal(retries(events).length, 1);
    assert.equal(agent.messages.at(-1)?.content, 'fast');
  });

  test('retries are bounded: after maxRetries the turn ends with an error and a valid, saved history', async () => {
    const emulator = createEmulator({ script: Array.from({ length: 3 }, () => ({ fault: { status: 503 as const } })) });
    const store = recordingStore();
    const agent = agentFor(emulator, { session: store, retry: { maxRetries: 2, baseDelayMs: 1 } });
    const events = await collect(agent.runTurn('hi'));
    assert.equal(retries(events).length, 2);
    assert.equal(emulator.requests.length, 3);
    const error = events.find((event) => event.type === 'error');
    assert.ok(error?.type === 'error' && /gave up after 2 retries/.test(error.message) && error.status === 503);
    assert.deepEqual(lastEvent(events), { type: 'turn-end', reason: 'error' });
    assert.deepEqual(await store.current(), [{ role: 'user', content: 'hi' }]);
    // Next turn, the provider is back: one more user message, nothing removed.
    emulator.push({ text: 'back' });
    const next = await collect(agent.runTurn('hi again'));
    assert.equal((lastEvent(next) as { reason: string }).reason, 'stop');
    assert.deepEqual(userTexts(agent.messages), ['hi', 'hi again']);
    assertEveryRequestValid(emulator);
  });

  test('a 4xx that is not about the history is not retried', async () => {
    const emulator = createEmulator();
    const agent = agentFor(emulator, {
      fetch: (async () =>
        new Response(JSON.stringify({ error: { message: 'Authentication Fails (no such user)' } }), {
          status: 401,
        })) as typeof fetch,
    });
    const events = await collect(agent.runTurn('hi'));
    assert.equal(retries(events).length, 0);
    const error = events.find((event) => event.type === 'error');
    assert.ok(error?.type === 'error' && error.status === 401 && /Authentication Fails/.test(error.message));
    assert.doesNotMatch(JSON.stringify(events), /sk-test/, 'the API key never shows up in events');
  });
});

describe('createAgent: a pairing 400 gets the strongest repair and exactly one retry', () => {
  // The agent keeps the history for OpenAI; the provider is stricter (DeepSeek: call ids unique
  // across the whole request). Its 400 names a pairing rule: strongest repair, one retry.
  const reusedIds = [
    { role: 'user', content: 'first' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'echo', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'call_0', content: 'one' },
    { role: 'assistant', content: 'ok' },
    { role: 'user', content: 'second' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'echo', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'call_0', content: 'two' },
    { role: 'assistant', content: 'ok again' },
  ];

  test('healed: the retry succeeds and the repaired history is saved', async () => {
    const emulator = createEmulator({ profile: 'deepseek', script: [{ text: 'healed answer' }] });
    const store = recordingStore(reusedIds);
    const agent = agentFor(emulator, { profile: 'openai', session: store });
    const events = await collect(agent.runTurn('third'));
    assert.deepEqual(
      emulator.requests.map((request) => request.status),
      [400, 200],
    );
    assert.equal(emulator.requests[0]?.violations[0]?.rule, 'tool-call-id-duplicate');
    const retry = retries(events);
    assert.equal(retry.length, 1);
    assert.match(retry[0]!.reason, /tool-(call-id|result)-duplicate/);
    const repairEvent = events.find((event) => event.type === 'repair');
    assert.ok(repairEvent?.type === 'repair' && repairEvent.changes.some((change) => change.kind === 'id-remapped'));
    assert.equal((lastEvent(events) as { reason: string }).reason, 'stop');
    const saved = await store.current();
    assertValidHistory(saved, 'deepseek');
    assert.deepEqual(userTexts(saved), ['first', 'second', 'third']);
  });

  test('healed: a user message that repeats the one before it (a retried prompt) is kept, not folded', async () => {
    // The same question again after an answerless turn: the strongest repair must not drop it.
    const history = [...reusedIds, { role: 'user', content: 'third' }];
    const emulator = createEmulator({ profile: 'deepseek', script: [{ text: 'healed answer' }] });
    const store = recordingStore(history);
    const agent = agentFor(emulator, { profile: 'openai', session: store });
    const events = await collect(agent.runTurn('third'));
    assert.deepEqual(
      emulator.requests.map((request) => request.status),
      [400, 200],
    );
    assert.equal(retries(events).length, 1);
    assert.equal((lastEvent(events) as { reason: string }).reason, 'stop');
    assert.deepEqual(userTexts(await store.current()), ['first', 'second', 'third', 'third']);
  });

  test('a second failure ends the turn with a clear error, the user message kept and the history valid and saved', async () => {
    // The provider wants reasoning_content (thinking mode); the agent, set up for OpenAI, cannot know.
    const history = [
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'echo', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      { role: 'assistant', content: 'Sunny.' },
    ];
    const emulator = createEmulator({ profile: 'deepseek', thinking: true });
    const store = recordingStore(history);
    const agent = agentFor(emulator, { profile: 'openai', session: store });
    const events = await collect(agent.runTurn('and tomorrow?'));
    assert.deepEqual(
      emulator.requests.map((request) => request.status),
      [400, 400],
    );
    assert.equal(retries(events).length, 1, 'exactly one retry');
    const error = events.find((event) => event.type === 'error');
    assert.ok(error?.type === 'error');
    assert.equal(error.rule, 'reasoning-content-missing');
    assert.equal(error.status, 400);
    assert.match(error.message, /still rejects the history after a repair and one retry.*reasoning_content/);
    assert.deepEqual(lastEvent(events), { type: 'turn-end', reason: 'error' });
    const saved = await store.current();
    assertValidHistory(saved, 'openai');
    assert.deepEqual(userTexts(saved), ['weather?', 'and tomorrow?']);
  });
});
