import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createEmulator } from '../../src/emulator/index.js';
import type { RepairEvent } from '../../src/http/index.js';
import { createSanitizingFetch } from '../../src/http/index.js';

const URL_CHAT = 'http://upstream.test/v1/chat/completions';

/** Parallel calls, only one answered, then the user moved on: OpenAI's most reported 400 (corpus 013). */
const unanswered = [
  { role: 'user', content: 'Call foo twice' },
  { role: 'assistant', content: '', tool_calls: [call('call_a'), call('call_b')] },
  { role: 'tool', tool_call_id: 'call_a', content: 'done' },
  { role: 'user', content: 'and now?' },
];

const valid = [
  { role: 'user', content: 'Call foo' },
  { role: 'assistant', content: null, tool_calls: [call('call_a')] },
  { role: 'tool', tool_call_id: 'call_a', content: 'done' },
];

function call(id: string): { id: string; type: 'function'; function: { name: string; arguments: string } } {
  return { id, type: 'function', function: { name: 'foo', arguments: '{}' } };
}

/** A fetch that records what it was called with and answers through `inner`. */
function spy(inner: typeof fetch): {
  fetch: typeof fetch;
  calls: { input: unknown; init: RequestInit | undefined; response?: Response }[];
} {
  const calls: { input: unknown; init: RequestInit | undefined; response?: Response }[] = [];
  const wrapped = (async (input: string | URL | Request, init?: RequestInit) => {
    const entry: (typeof calls)[number] = { input, init };
    calls.push(entry);
    entry.response = await inner(input, init);
    return entry.response;
  }) as typeof fetch;
  return { fetch: wrapped, calls };
}

test('a valid request goes out untouched: the very same body string, no repair reported', async () => {
  const emulator = createEmulator({ profile: 'openai' });
  const upstream = spy(emulator.fetch);
  const events: RepairEvent[] = [];
  const sanitizing = createSanitizingFetch({
    profile: 'openai',
    fetch: upstream.fetch,
    onRepair: (event) => events.push(event),
  });
  const body = JSON.stringify({ model: 'gpt-4o', messages: valid });
  const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body };
  const response = await sanitizing(URL_CHAT, init);
  assert.equal(response.status, 200);
  assert.equal(upstream.calls.length, 1);
  assert.equal(upstream.calls[0]?.init, init); // the caller's own init object, body included
  assert.equal(events.length, 0);
});

test('valid bytes go out as the same bytes (Uint8Array bodies are not re-encoded)', async () => {
  const emulator = createEmulator({ profile: 'openai' });
  const upstream = spy(emulator.fetch);
  const sanitizing = createSanitizingFetch({ fetch: upstream.fetch });
  // Odd spacing and key order: a re-serialisation would change these bytes.
  const bytes = new TextEncoder().encode(`{ "messages" : ${JSON.stringify(valid, null, 1)}, "model":"gpt-4o" }`);
  await sanitizing(URL_CHAT, { method: 'POST', body: bytes });
  assert.equal(upstream.calls[0]?.init?.body, bytes);
});

test('a broken history is repaired before it is sent, and the provider sees a valid request', async () => {
  const emulator = createEmulator({ profile: 'openai' });
  const events: RepairEvent[] = [];
  const sanitizing = createSanitizingFetch({
    profile: 'openai',
    fetch: emulator.fetch,
    onRepair: (event) => events.push(event),
  });
  const response = await sanitizing(URL_CHAT, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': '999' },
    body: JSON.stringify({ model: 'gpt-4o', messages: unanswered }),
  });
  assert.equal(response.status, 200);
  assert.deepEqual(
    emulator.requests.map((request) => request.violations.length),
    [0],
  );
  assert.equal(events.length, 1);
  assert.equal(events[0]?.attempt, 'request');
  assert.deepEqual(events[0]?.rules, ['tool-calls-unanswered']);
  assert.ok(
    events[0]?.changes.some((change) => change.kind === 'result-synthesized' && change.toolCallId === 'call_b'),
  );
  // Other fields of the body are kept as they were.
  assert.equal(emulator.requests[0]?.body.model, 'gpt-4o');
});

test('a Request object as input is repaired too', async () => {
  const emulator = createEmulator({ profile: 'openai' });
  const sanitizing = createSanitizingFetch({ fetch: emulator.fetch });
  const response = await sanitizing(
    new Request(URL_CHAT, { method: 'POST', body: JSON.stringify({ model: 'gpt-4o', messages: unanswered }) }),
  );
  assert.equal(response.status, 200);
  assert.equal(emulator.requests[0]?.violations.length, 0);
});

test('a streamed response is handed back as the very Response the inner fetch returned', async () => {
  const emulator = createEmulator({
    profile: 'openai',
    script: [{ text: 'streamed answer', stream: { chunkSize: 4 } }],
  });
  const upstream = spy(emulator.fetch);
  const sanitizing = createSanitizingFetch({ fetch: upstream.fetch });
  const response = await sanitizing(URL_CHAT, {
    method: 'POST',
    body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: unanswered }),
  });
  assert.equal(response, upstream.calls[0]?.response);
  assert.match(await response.text(), /data: \[DONE\]/);
});

test('GETs and other paths pass straight through', async () => {
  const upstream = spy(async () => new Response('ok'));
  const sanitizing = createSanitizingFetch({ fetch: upstream.fetch });
  const init = { method: 'POST', body: JSON.stringify({ messages: unanswered }) };
  await sanitizing('http://upstream.test/v1/embeddings', init);
  await sanitizing('http://upstream.test/v1/chat/completions');
  await sanitizing(URL_CHAT, { method: 'POST', body: 'not json' });
  assert.equal(upstream.calls[0]?.init, init);
  assert.equal(upstream.calls[1]?.init, undefined);
  assert.equal(upstream.calls[2]?.init?.body, 'not json');
});

test('a 400 naming a pairing rule the profile missed is healed: strongest repair, one retry, 200', async () => {
  // The user configured OpenAI's rules, but the upstream is Moonshot, which wants call ids unique across the request.
  const emulator = createEmulator({ profile: 'moonshot' });
  const upstream = spy(emulator.fetch);
  const events: RepairEvent[] = [];
  const sanitizing = createSanitizingFetch({
    profile: 'openai',
    fetch: upstream.fetch,
    onRepair: (event) => events.push(event),
  });
  const reused = [
    { role: 'user', content: 'read it' },
    { role: 'assistant', content: '', tool_calls: [call('read:0')] },
    { role: 'tool', tool_call_id: 'read:0', content: 'one' },
    { role: 'user', content: 'again' },
    { role: 'assistant', content: '', tool_calls: [call('read:0')] },
    { role: 'tool', tool_call_id: 'read:0', content: 'two' },
    { role: 'user', content: 'thanks' },
  ];
  const response = await sanitizing(URL_CHAT, {
    method: 'POST',
    body: JSON.stringify({ model: 'kimi-k2', messages: reused }),
  });
  assert.equal(response.status, 200);
  assert.deepEqual(
    emulator.requests.map((request) => request.status),
    [400, 200],
  );
  assert.equal(upstream.calls.length, 2);
  assert.equal(events.length, 1);
  assert.equal(events[0]?.attempt, 'heal');
  assert.equal(events[0]?.rejectedFor, 'tool-call-id-duplicate');
});

test('never more than one retry: a 400 that keeps coming back is returned after the second attempt', async () => {
  const text = JSON.stringify({
    error: {
      message:
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_x",
      type: 'invalid_request_error',
      param: 'messages',
      code: null,
    },
  });
  const upstream = spy(
    async () => new Response(text, { status: 400, headers: { 'content-type': 'application/json' } }),
  );
  const sanitizing = createSanitizingFetch({ fetch: upstream.fetch });
  // Something the strongest level changes (a repeated user message), so a heal is attempted.
  const messages = [
    { role: 'user', content: 'hi' },
    { role: 'user', content: 'hi' },
  ];
  const response = await sanitizing(URL_CHAT, { method: 'POST', body: JSON.stringify({ messages }) });
  assert.equal(response.status, 400);
  assert.equal(upstream.calls.length, 2); // the first attempt and exactly one heal
  assert.equal(await response.text(), text);
});

test('a 400 that is not about pairing, a 429 and a 500 are returned as they came, not retried', async () => {
  for (const [status, message] of [
    [400, 'Invalid model name'],
    [429, 'Rate limit reached'],
    [500, 'The server had an error'],
  ] as const) {
    const upstream = spy(
      async () => new Response(JSON.stringify({ error: { message } }), { status, headers: { 'retry-after': '3' } }),
    );
    const sanitizing = createSanitizingFetch({ fetch: upstream.fetch });
    const response = await sanitizing(URL_CHAT, { method: 'POST', body: JSON.stringify({ messages: valid }) });
    assert.equal(response.status, status);
    assert.equal(response.headers.get('retry-after'), '3');
    assert.equal(upstream.calls.length, 1);
    assert.match(await response.text(), new RegExp(message));
  }
});

test('a throwing onRepair does not break the request', async () => {
  const emulator = createEmulator({ profile: 'openai' });
  const sanitizing = createSanitizingFetch({
    fetch: emulator.fetch,
    onRepair: () => {
      throw new Error('observer bug');
    },
  });
  const response = await sanitizing(URL_CHAT, { method: 'POST', body: JSON.stringify({ messages: unanswered }) });
  assert.equal(response.status, 200);
});

test("when the 400 reads like a stricter provider than the profile, the heal uses that provider's rules", async () => {
  // Configured for OpenAI, actually talking to Mistral, which forbids a user message right after a tool result.
  const emulator = createEmulator({ profile: 'mistral' });
  const events: RepairEvent[] = [];
  const sanitizing = createSanitizingFetch({
    profile: 'openai',
    fetch: emulator.fetch,
    onRepair: (event) => events.push(event),
  });
  const messages = [
    { role: 'user', content: 'list files' },
    {
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'abcDEF123', type: 'function', function: { name: 'ls', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'abcDEF123', content: 'a.txt' },
    { role: 'user', content: 'stop, do something else' },
  ];
  const response = await sanitizing(URL_CHAT, {
    method: 'POST',
    body: JSON.stringify({ model: 'mistral-large', messages }),
  });
  assert.equal(response.status, 200);
  assert.deepEqual(
    emulator.requests.map((request) => request.status),
    [400, 200],
  );
  assert.equal(events[0]?.rejectedFor, 'tool-followed-by-user');
});
