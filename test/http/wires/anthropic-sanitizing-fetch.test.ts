import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import Anthropic from '@anthropic-ai/sdk';
import { generateText } from 'ai';
import type { RepairEvent } from '../../../src/http/index.js';
import { createSanitizingFetch } from '../../../src/http/index.js';
import { useListeningEmulator } from '../../support/listening-emulator.js';

/**
 * The sanitizing fetch on the Anthropic wire, under the real `@anthropic-ai/sdk` and
 * `@ai-sdk/anthropic`, against the strict emulator over a socket: each poisoned history is sent as
 * the client builds it; a pass means the emulator (the core's Anthropic rules) saw only valid
 * requests. The first test is the control: without the fetch, the same history gets the 400.
 */

const served = useListeningEmulator({ wires: ['anthropic'] });
const { emulator } = served;

const MODEL = 'claude-sonnet-4-5';
const HEADERS = { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' };
const call = { type: 'tool_use' as const, id: 'toolu_01A', name: 'Read', input: { file_path: '/a.txt' } };
const result = { type: 'tool_result' as const, tool_use_id: 'toolu_01A', content: 'hello' };
/** The shape Claude Code 2.1.332 resumes as it is (e2e:agents): text before the tool_result. */
const textBeforeResult: Anthropic.MessageParam[] = [
  { role: 'user', content: 'read /a.txt' },
  { role: 'assistant', content: [call] },
  { role: 'user', content: [{ type: 'text', text: 'Here is the file.' }, result] },
];
const whitespaceBesideCall: Anthropic.MessageParam[] = [
  { role: 'user', content: 'read /a.txt' },
  { role: 'assistant', content: [{ type: 'text', text: ' \n' }, call] },
  { role: 'user', content: [result] },
];
const unanswered: Anthropic.MessageParam[] = [
  { role: 'user', content: 'read /a.txt' },
  { role: 'assistant', content: [call] },
  { role: 'user', content: 'never mind, say hi' },
];

function client(fetch?: typeof globalThis.fetch): Anthropic {
  return new Anthropic({
    apiKey: 'sk-ant-test',
    baseURL: served.url,
    maxRetries: 0,
    ...(fetch === undefined ? {} : { fetch }),
  });
}

function sanitizing(events: RepairEvent[] = [], send?: typeof fetch): typeof fetch {
  return createSanitizingFetch({
    onRepair: (event) => events.push(event),
    ...(send === undefined ? {} : { fetch: send }),
  });
}

function lastRequestWasValid(): void {
  const last = emulator.requests.at(-1);
  assert.ok(last !== undefined);
  assert.equal(last.status, 200, JSON.stringify(last.violations));
  assert.deepEqual(last.violations, []);
}

describe('createSanitizingFetch on the Anthropic wire', () => {
  test('control: without it, the real SDK sends each poisoned history and gets the 400', async () => {
    for (const messages of [textBeforeResult, whitespaceBesideCall, unanswered]) {
      await assert.rejects(
        client().messages.create({ model: MODEL, max_tokens: 64, messages }),
        (error: unknown) => error instanceof Anthropic.BadRequestError,
      );
    }
  });

  test('@anthropic-ai/sdk messages.create: each poisoned history is repaired on the way out, the answer comes back', async () => {
    for (const [messages, rule] of [
      [textBeforeResult, 'tool-result-not-first'],
      [whitespaceBesideCall, 'text-block-empty'],
      [unanswered, 'tool-calls-unanswered'],
    ] as const) {
      const events: RepairEvent[] = [];
      emulator.push({ text: 'repaired and answered' });
      const message = await client(sanitizing(events)).messages.create({
        model: MODEL,
        max_tokens: 64,
        messages: [...messages],
      });
      assert.deepEqual(message.content, [{ type: 'text', text: 'repaired and answered' }]);
      lastRequestWasValid();
      assert.equal(events.length, 1);
      assert.equal(events[0]?.wire, 'anthropic');
      assert.equal(events[0]?.attempt, 'request');
      assert.ok(events[0]?.rules.includes(rule), `${rule} in ${events[0]?.rules.join(', ')}`);
      assert.match(events[0]?.url ?? '', /\/v1\/messages$/);
    }
  });

  test('@anthropic-ai/sdk messages.stream through it: repaired, the events relayed as they came', async () => {
    emulator.push({ text: 'streamed after the repair', stream: { chunkSize: 3 } });
    const stream = client(sanitizing()).messages.stream({
      model: MODEL,
      max_tokens: 64,
      messages: [...textBeforeResult],
    });
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const message = await stream.finalMessage();
    assert.equal(text, 'streamed after the repair');
    assert.equal(message.stop_reason, 'end_turn');
    lastRequestWasValid();
  });

  test('@ai-sdk/anthropic with it as its fetch: a history with an unanswered call is answered', async () => {
    emulator.push({ text: 'hi from the AI SDK path' });
    const provider = createAnthropic({ apiKey: 'sk-ant-test', baseURL: `${served.url}/v1`, fetch: sanitizing() });
    const response = await generateText({
      model: provider(MODEL),
      maxRetries: 0,
      messages: [
        { role: 'user', content: 'read /a.txt' },
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: 'toolu_01A', toolName: 'Read', input: { file_path: '/a.txt' } }],
        },
        { role: 'user', content: 'never mind, say hi' },
      ],
    });
    assert.equal(response.text, 'hi from the AI SDK path');
    lastRequestWasValid();
  });

  test('a valid request goes out byte for byte; count_tokens and the query are the wire too', async () => {
    const sent: { url: string; body: unknown }[] = [];
    const recording: typeof fetch = async (input, init) => {
      sent.push({ url: String(input instanceof Request ? input.url : input), body: init?.body });
      return emulator.fetch(input, init);
    };
    const valid = JSON.stringify({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    const events: RepairEvent[] = [];
    const response = await sanitizing(events, recording)(`${served.url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: HEADERS,
      body: valid,
    });
    assert.equal(response.status, 200);
    assert.equal(sent[0]?.body, valid, 'the very same string');
    assert.equal(events.length, 0, 'nothing repaired');
    const counted = await sanitizing(events, recording)(`${served.url}/v1/messages/count_tokens?beta=true`, {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({ model: MODEL, messages: unanswered }),
    });
    assert.equal(counted.status, 200);
    assert.equal(events[0]?.wire, 'anthropic');
    assert.match(events[0]?.url ?? '', /count_tokens\?beta=true$/);
  });

  test("a body that is not the wire's shape goes out untouched and the 400 comes back as it came, with one request", async () => {
    const sent: unknown[] = [];
    const recording: typeof fetch = async (input, init) => {
      sent.push(init?.body);
      return emulator.fetch(input, init);
    };
    const notJson = '{"messages": [';
    const response = await sanitizing([], recording)(`${served.url}/v1/messages`, {
      method: 'POST',
      headers: HEADERS,
      body: notJson,
    });
    assert.equal(response.status, 400);
    assert.deepEqual(sent, [notJson]);
    assert.equal(((await response.json()) as any).type, 'error');
  });

  test("the key never reaches a repair event, the emulator's record or an error body", async () => {
    const key = 'sk-ant-api03-never-logged-0123456789';
    const events: RepairEvent[] = [];
    const keyed = new Anthropic({ apiKey: key, baseURL: served.url, maxRetries: 0, fetch: sanitizing(events) });
    emulator.push({ text: 'fine' });
    await keyed.messages.create({ model: MODEL, max_tokens: 64, messages: [...unanswered] });
    // Thinking on and the signed thinking block of the current loop missing: the repair must not invent one, the 400 comes back.
    const thinking = { type: 'enabled' as const, budget_tokens: 1024 };
    const failed = await keyed.messages
      .create({
        model: MODEL,
        max_tokens: 64,
        thinking,
        messages: [
          { role: 'user', content: 'read' },
          { role: 'assistant', content: [call] },
          { role: 'user', content: [result] },
        ],
      })
      .catch((error: unknown) => error);
    assert.ok(failed instanceof Anthropic.BadRequestError, String(failed));
    const seen = JSON.stringify([events, emulator.requests.slice(-2), failed.error, failed.message]);
    assert.equal(events.length, 1);
    assert.ok(!seen.includes(key) && !seen.includes('never-logged'));
  });

  test('a 400 the repair cannot change is not retried: it goes back as it came (thinking on, the signed block missing)', async () => {
    const sent: unknown[] = [];
    const recording: typeof fetch = async (input, init) => {
      sent.push(init?.body);
      return emulator.fetch(input, init);
    };
    const body = JSON.stringify({
      model: MODEL,
      max_tokens: 64,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [
        { role: 'user', content: 'read' },
        { role: 'assistant', content: [call] },
        { role: 'user', content: [result] },
      ],
    });
    const response = await sanitizing([], recording)(`${served.url}/v1/messages`, {
      method: 'POST',
      headers: HEADERS,
      body,
    });
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as any).error.message, /Expected `thinking` or `redacted_thinking`/);
    assert.equal(sent.length, 1);
  });
});

describe('createSanitizingFetch on the Anthropic wire, a large 400', () => {
  test('is handed over after the heal bound (1 MiB, as on the chat path), not read whole first', {
    timeout: 5000,
  }, async () => {
    // 2 MiB of an error that never ends: read whole, the fetch would never answer.
    const piece = new TextEncoder().encode('x'.repeat(1024 * 1024));
    let sent = 0;
    const send: typeof fetch = async () => {
      sent += 1;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(
            new TextEncoder().encode('{"type":"error","error":{"type":"invalid_request_error","message":"'),
          );
          controller.enqueue(piece);
          controller.enqueue(piece);
        },
      });
      return new Response(body, { status: 400, headers: { 'content-type': 'application/json' } });
    };
    const response = await sanitizing([], send)(`${served.url}/v1/messages`, {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({ model: MODEL, max_tokens: 64, messages: textBeforeResult }),
    });
    assert.equal(response.status, 400);
    const reader = response.body!.getReader();
    const first = await reader.read();
    assert.ok(
      first.value !== undefined && new TextDecoder().decode(first.value).startsWith('{"type":"error"'),
      'the answer replays from its first byte',
    );
    await reader.cancel();
    assert.equal(sent, 1, 'a 400 over the bound is not healed and retried');
  });
});
