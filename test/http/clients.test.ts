import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { createEmulator } from '../../src/emulator/index.js';
import type { RepairEvent } from '../../src/http/index.js';
import { createProxyHandler, createSanitizingFetch, serveHandler } from '../../src/http/index.js';

/**
 * The real client libraries, each driven into the classic 400 (a tool call left unanswered, then
 * the user speaks), once with the sanitizing fetch and once through the proxy, against the
 * strict emulator. The emulator answers a broken request with OpenAI's own 400, so a pass means
 * the repair reached the wire.
 */

const emulator = createEmulator({ profile: 'openai' });
let upstreamUrl = '';
let proxyUrl = '';
const closers: (() => Promise<void>)[] = [];

before(async () => {
  const upstream = await emulator.listen();
  upstreamUrl = upstream.url;
  closers.push(upstream.close);
  const proxy = await serveHandler(createProxyHandler({ upstream: upstreamUrl, profile: 'openai' }), { port: 0 });
  proxyUrl = proxy.url;
  closers.push(proxy.close);
});
after(async () => {
  for (const close of closers.reverse()) await close();
});

const call = {
  id: 'call_weather',
  type: 'function' as const,
  function: { name: 'weather', arguments: '{"city":"Oslo"}' },
};
const brokenOpenAI: OpenAI.ChatCompletionMessageParam[] = [
  { role: 'user', content: 'Weather in Oslo?' },
  { role: 'assistant', content: null, tool_calls: [call] },
  { role: 'user', content: 'Never mind, tell me a joke.' },
];

const brokenModelMessages = [
  { role: 'user' as const, content: 'Weather in Oslo?' },
  {
    role: 'assistant' as const,
    content: [{ type: 'tool-call' as const, toolCallId: 'call_weather', toolName: 'weather', input: { city: 'Oslo' } }],
  },
  { role: 'user' as const, content: 'Never mind, tell me a joke.' },
];

const brokenLangChain = (): (HumanMessage | AIMessage)[] => [
  new HumanMessage('Weather in Oslo?'),
  new AIMessage({
    content: '',
    tool_calls: [{ id: 'call_weather', name: 'weather', args: { city: 'Oslo' }, type: 'tool_call' }],
  }),
  new HumanMessage('Never mind, tell me a joke.'),
];

function lastRequestWasValid(): void {
  const last = emulator.requests.at(-1);
  assert.ok(last !== undefined);
  assert.equal(last.status, 200, JSON.stringify(last.violations));
  assert.deepEqual(last.violations, []);
}

function sanitizing(events: RepairEvent[] = []): typeof fetch {
  return createSanitizingFetch({ profile: 'openai', fetch: emulator.fetch, onRepair: (event) => events.push(event) });
}

test('control: without unstuck the emulator rejects this history the way OpenAI does', async () => {
  const client = new OpenAI({ baseURL: `${upstreamUrl}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  await assert.rejects(
    client.chat.completions.create({ model: 'gpt-4o', messages: brokenOpenAI }),
    (error: unknown) => {
      assert.ok(error instanceof OpenAI.APIError);
      assert.equal(error.status, 400);
      assert.match(error.message, /must be followed by tool messages/);
      return true;
    },
  );
});

test('control: the AI SDK and LangChain really send the broken history (400 without unstuck)', async () => {
  const before = emulator.requests.length;
  const provider = createOpenAICompatible({ name: 'emulated', baseURL: `${upstreamUrl}/v1`, apiKey: 'sk-test' });
  await assert.rejects(
    generateText({ model: provider('gpt-4o'), messages: brokenModelMessages, maxRetries: 0 }),
    /must be followed by tool messages/,
  );
  const model = new ChatOpenAI({
    model: 'gpt-4o',
    apiKey: 'sk-test',
    maxRetries: 0,
    configuration: { baseURL: `${upstreamUrl}/v1` },
  });
  await assert.rejects(model.invoke(brokenLangChain()), /must be followed by tool messages/);
  assert.deepEqual(
    emulator.requests.slice(before).map((request) => request.status),
    [400, 400],
  );
});

test('openai SDK with the sanitizing fetch: create and stream', async () => {
  emulator.push({ text: 'Knock knock.' }, { text: 'Who is there?', stream: { chunkSize: 3 } });
  const events: RepairEvent[] = [];
  const client = new OpenAI({
    baseURL: 'http://upstream.invalid/v1',
    apiKey: 'sk-test',
    maxRetries: 0,
    fetch: sanitizing(events),
  });
  const completion = await client.chat.completions.create({ model: 'gpt-4o', messages: brokenOpenAI });
  assert.equal(completion.choices[0]?.message.content, 'Knock knock.');
  lastRequestWasValid();
  let text = '';
  for await (const chunk of await client.chat.completions.create({
    model: 'gpt-4o',
    messages: brokenOpenAI,
    stream: true,
  }))
    text += chunk.choices[0]?.delta.content ?? '';
  assert.equal(text, 'Who is there?');
  lastRequestWasValid();
  assert.deepEqual(
    events.map((event) => event.rules),
    [['tool-calls-unanswered'], ['tool-calls-unanswered']],
  );
});

test('openai SDK through the proxy: create and stream', async () => {
  emulator.push({ text: 'Via proxy.' }, { text: 'Streamed via proxy.', stream: { chunkSize: 4 } });
  const client = new OpenAI({ baseURL: `${proxyUrl}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  const completion = await client.chat.completions.create({ model: 'gpt-4o', messages: brokenOpenAI });
  assert.equal(completion.choices[0]?.message.content, 'Via proxy.');
  lastRequestWasValid();
  let text = '';
  for await (const chunk of await client.chat.completions.create({
    model: 'gpt-4o',
    messages: brokenOpenAI,
    stream: true,
  }))
    text += chunk.choices[0]?.delta.content ?? '';
  assert.equal(text, 'Streamed via proxy.');
  lastRequestWasValid();
});

for (const route of ['fetch', 'proxy'] as const) {
  test(`AI SDK (@ai-sdk/openai-compatible) ${route === 'fetch' ? 'with the sanitizing fetch' : 'through the proxy'}: generateText and streamText`, async () => {
    emulator.push({ text: 'Generated.' }, { text: 'Streamed text.', stream: { chunkSize: 2 } });
    const provider =
      route === 'fetch'
        ? createOpenAICompatible({
            name: 'emulated',
            baseURL: 'http://upstream.invalid/v1',
            apiKey: 'sk-test',
            fetch: sanitizing(),
          })
        : createOpenAICompatible({ name: 'emulated', baseURL: `${proxyUrl}/v1`, apiKey: 'sk-test' });
    const generated = await generateText({ model: provider('gpt-4o'), messages: brokenModelMessages, maxRetries: 0 });
    assert.equal(generated.text, 'Generated.');
    lastRequestWasValid();
    const errors: unknown[] = [];
    const streamed = streamText({
      model: provider('gpt-4o'),
      messages: brokenModelMessages,
      maxRetries: 0,
      onError: ({ error }) => void errors.push(error),
    });
    let text = '';
    for await (const delta of streamed.textStream) text += delta;
    assert.deepEqual(errors, []);
    assert.equal(text, 'Streamed text.');
    lastRequestWasValid();
  });
}

for (const route of ['fetch', 'proxy'] as const) {
  test(`LangChain ChatOpenAI ${route === 'fetch' ? 'with the sanitizing fetch' : 'through the proxy'}: invoke and stream`, async () => {
    emulator.push({ text: 'Invoked.' }, { text: 'Streamed chain.', stream: { chunkSize: 5 } });
    const configuration =
      route === 'fetch'
        ? { baseURL: 'http://upstream.invalid/v1', fetch: sanitizing() }
        : { baseURL: `${proxyUrl}/v1` };
    const model = new ChatOpenAI({ model: 'gpt-4o', apiKey: 'sk-test', maxRetries: 0, configuration });
    const invoked = await model.invoke(brokenLangChain());
    assert.equal(invoked.content, 'Invoked.');
    lastRequestWasValid();
    let text = '';
    for await (const chunk of await model.stream(brokenLangChain()))
      text += typeof chunk.content === 'string' ? chunk.content : '';
    assert.equal(text, 'Streamed chain.');
    lastRequestWasValid();
  });
}
