import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CompletionAttempts, CompletionOutcome, RequestPath } from '../../src/agent/request-completion.js';
import { requestCompletion } from '../../src/agent/request-completion.js';
import type { AgentEvent } from '../../src/agent/types.js';
import type { Message } from '../../src/core/index.js';
import type { Emulator } from '../../src/emulator/index.js';
import { createEmulator } from '../../src/emulator/index.js';

/** The request path against the emulator, in-process; pauses are recorded, not waited. */
function pathTo(emulator: Emulator, slept: number[] = []): RequestPath {
  return {
    url: 'http://emulator.test/v1/chat/completions',
    apiKey: 'sk-test',
    fetch: emulator.fetch,
    idleTimeoutMs: 2_000,
    retry: { maxRetries: 2, baseDelayMs: 100, maxDelayMs: 1_000 },
    sleep: async (ms) => void slept.push(ms),
  };
}

const body = (messages: readonly Message[], stream = true): Record<string, unknown> => ({
  model: 'deepseek-chat',
  messages,
  stream,
});

/** Runs the generator to its end: every event it yielded, and what it returned. */
async function drain<C>(
  generator: AsyncGenerator<AgentEvent, CompletionOutcome<C>>,
): Promise<{ events: AgentEvent[]; outcome: CompletionOutcome<C> }> {
  const events: AgentEvent[] = [];
  for (;;) {
    const next = await generator.next();
    if (next.done === true) return { events, outcome: next.value };
    events.push(next.value);
  }
}

function attemptsOf(
  messages: () => readonly Message[],
  extra: Partial<CompletionAttempts<number>> = {},
): CompletionAttempts<number> {
  let built = 0;
  return {
    signal: new AbortController().signal,
    prepare: () => {
      built += 1;
      return { body: body(messages()), events: [], context: built };
    },
    heal: async () => assert.fail('no heal expected'),
    ...extra,
  };
}

describe('requestCompletion: one request, its retries and its heal, as events and an outcome', () => {
  test('a 429 then success: one retry event with its pause, the deltas, and the completion returned', async () => {
    const emulator = createEmulator({
      script: [{ fault: { status: 429 } }, { text: 'hello there', stream: { chunkSize: 4 } }],
    });
    const slept: number[] = [];
    const { events, outcome } = await drain(
      requestCompletion(
        pathTo(emulator, slept),
        attemptsOf(() => [{ role: 'user', content: 'hi' }]),
      ),
    );
    assert.equal(outcome.kind, 'done');
    assert.ok(outcome.kind === 'done');
    assert.equal(outcome.completion.text, 'hello there');
    assert.equal(outcome.context, 2, 'the body was prepared again for the retry, and its context handed back');
    const retry = events[0];
    assert.ok(retry?.type === 'retry');
    assert.deepEqual([retry.attempt, retry.delayMs], [1, 100]);
    assert.match(retry.reason, /HTTP 429/);
    assert.deepEqual(slept, [100]);
    assert.equal(
      events
        .slice(1)
        .map((event) => (event.type === 'text-delta' ? event.text : `<${event.type}>`))
        .join(''),
      'hello there',
    );
    assert.deepEqual(
      emulator.requests.map((request) => request.status),
      [429, 200],
    );
  });

  test('quiet: the answer is returned but no delta is yielded (a summary is not the answer)', async () => {
    const emulator = createEmulator({ script: [{ text: 'a summary', reasoning: 'thought' }] });
    const { events, outcome } = await drain(
      requestCompletion(
        pathTo(emulator),
        attemptsOf(() => [{ role: 'user', content: 'hi' }], { quiet: true }),
      ),
    );
    assert.deepEqual(events, []);
    assert.ok(outcome.kind === 'done' && outcome.completion.text === 'a summary');
  });

  test('the events prepare returns are yielded before each attempt', async () => {
    const emulator = createEmulator({ script: [{ fault: { status: 503 } }, { text: 'ok' }] });
    const notice: AgentEvent = { type: 'compact', omittedMessages: 2, estimatedTokens: 10 };
    const { events } = await drain(
      requestCompletion(pathTo(emulator), {
        signal: new AbortController().signal,
        quiet: true,
        prepare: () => ({ body: body([{ role: 'user', content: 'hi' }]), events: [notice], context: undefined }),
        heal: async () => [],
      }),
    );
    assert.deepEqual(
      events.map((event) => event.type),
      ['compact', 'retry', 'compact'],
    );
  });

  test('transient failures past maxRetries: a failed outcome naming the status and the retries, never a throw', async () => {
    const emulator = createEmulator({
      script: [{ fault: { status: 500 } }, { fault: { status: 502 } }, { fault: { status: 503 } }],
    });
    const slept: number[] = [];
    const { events, outcome } = await drain(
      requestCompletion(
        pathTo(emulator, slept),
        attemptsOf(() => [{ role: 'user', content: 'hi' }]),
      ),
    );
    assert.deepEqual(slept, [100, 200]);
    assert.equal(events.filter((event) => event.type === 'retry').length, 2);
    assert.ok(outcome.kind === 'failed' && outcome.event.type === 'error');
    assert.equal(outcome.event.status, 503);
    assert.match(outcome.event.message, /gave up after 2 retries/);
  });

  test('a 400 naming a pairing rule: heal once, a retry event, then the healed request succeeds', async () => {
    const call = { id: 'call_0', type: 'function', function: { name: 'echo', arguments: '{}' } } as const;
    const reused: Message[] = [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_0', content: 'a' },
      { role: 'user', content: 'two' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_0', content: 'b' },
      { role: 'user', content: 'three' },
    ];
    const healed = reused.map((message, index) =>
      index === 4
        ? { ...message, tool_calls: [{ ...call, id: 'call_1' }] }
        : index === 5
          ? { ...message, tool_call_id: 'call_1' }
          : message,
    );
    let messages = reused;
    const rules: string[] = [];
    const emulator = createEmulator({ profile: 'deepseek', script: [{ text: 'fine now' }] });
    const { events, outcome } = await drain(
      requestCompletion(
        pathTo(emulator),
        attemptsOf(() => messages, {
          heal: async (rule) => {
            rules.push(rule);
            messages = healed;
            return [{ type: 'repair', changes: [] }];
          },
        }),
      ),
    );
    assert.equal(rules.length, 1);
    assert.match(rules[0]!, /tool-(call-id|result)-duplicate/);
    assert.deepEqual(
      events.slice(0, 2).map((event) => event.type),
      ['repair', 'retry'],
    );
    assert.ok(outcome.kind === 'done' && outcome.completion.text === 'fine now');
    assert.deepEqual(
      emulator.requests.map((request) => request.status),
      [400, 200],
    );
  });

  test('a pairing 400 after the heal: a failed outcome with the rule, and no second heal', async () => {
    const call = { id: 'call_0', type: 'function', function: { name: 'echo', arguments: '{}' } } as const;
    const reused: Message[] = [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_0', content: 'a' },
      { role: 'user', content: 'two' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_0', content: 'b' },
      { role: 'user', content: 'three' },
    ];
    let heals = 0;
    const emulator = createEmulator({ profile: 'deepseek' });
    const { outcome } = await drain(
      requestCompletion(
        pathTo(emulator),
        attemptsOf(() => reused, {
          heal: async () => {
            heals += 1;
            return [];
          },
        }),
      ),
    );
    assert.equal(heals, 1);
    assert.ok(outcome.kind === 'failed' && outcome.event.type === 'error');
    assert.match(String(outcome.event.rule), /tool-(call-id|result)-duplicate/);
    assert.equal(outcome.event.status, 400);
    assert.match(outcome.event.message, /still rejects the history after a repair and one retry/);
  });

  test('a 401 is not retried: failed at once', async () => {
    const path: RequestPath = {
      ...pathTo(createEmulator()),
      fetch: (async () =>
        new Response(JSON.stringify({ error: { message: 'Authentication Fails' } }), { status: 401 })) as typeof fetch,
    };
    const { events, outcome } = await drain(
      requestCompletion(
        path,
        attemptsOf(() => [{ role: 'user', content: 'hi' }]),
      ),
    );
    assert.ok(outcome.kind === 'failed' && outcome.event.type === 'error');
    assert.equal(outcome.event.status, 401);
    assert.match(outcome.event.message, /the provider rejected the request: HTTP 401: Authentication Fails/);
    assert.deepEqual(events, []);
  });

  test('an abort during the pause before a retry: aborted, with nothing partial', async () => {
    const emulator = createEmulator({ script: [{ fault: { status: 429 } }, { text: 'never asked for' }] });
    const controller = new AbortController();
    const path: RequestPath = {
      ...pathTo(emulator),
      sleep: async () => {
        controller.abort();
        throw new Error('aborted');
      },
    };
    const { outcome } = await drain(
      requestCompletion(
        path,
        attemptsOf(() => [{ role: 'user', content: 'hi' }], { signal: controller.signal }),
      ),
    );
    assert.deepEqual(outcome, { kind: 'aborted', partial: { text: '', reasoning: '' } });
    assert.equal(emulator.requests.length, 1);
  });

  test('an abort while the answer streams: aborted, with the text streamed so far', async () => {
    const emulator = createEmulator({
      script: [{ text: 'a long answer that is cut', stream: { chunkSize: 2, delayMs: 5 } }],
    });
    const controller = new AbortController();
    const generator = requestCompletion(
      pathTo(emulator),
      attemptsOf(() => [{ role: 'user', content: 'hi' }], { signal: controller.signal }),
    );
    const seen: string[] = [];
    let next = await generator.next();
    while (next.done !== true) {
      if (next.value.type === 'text-delta') seen.push(next.value.text);
      if (seen.length === 3) controller.abort();
      next = await generator.next();
    }
    assert.equal(next.value.kind, 'aborted');
    assert.ok(next.value.kind === 'aborted');
    assert.equal(next.value.partial.text, seen.join(''));
    assert.ok(seen.join('').length < 'a long answer that is cut'.length);
  });
});
