import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, test } from 'node:test';
import type { Io } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';
import { createEmulator } from '../../src/emulator/index.js';
import { scrapeUntil } from './support/scrape-metrics.js';

/**
 * Keys never reach a log line, /metrics or an error body, in each form a client sends one:
 * `authorization: Bearer …` (OpenAI-compatible), `x-api-key` (Anthropic), `x-goog-api-key` and a
 * `key=` query parameter (Gemini). `unstuck proxy` runs as the CLI runs it (in-process, its log
 * lines captured), in front of strict emulators, through repairs, a heal retry, a 400 that goes
 * back, 413s and 502s.
 */

const KEYS = {
  bearer: 'sk-bearer-4f3e2d1c0b9a',
  anthropic: 'sk-ant-xapikey-8a7b6c5d4e',
  goog: 'AIzaGoogHeader7e6d5c4b3a',
  query: 'AIzaQueryParam1a2b3c4d5e',
};

const stops: (() => Promise<void>)[] = [];
after(async () => {
  for (const stop of stops.reverse()) await stop();
});

async function startProxy(args: string[]): Promise<{ url: string; stderr: () => string }> {
  const controller = new AbortController();
  let err = '';
  let listening: (url: string) => void = () => undefined;
  const started = new Promise<string>((resolve) => (listening = resolve));
  const io: Io = {
    stdout: { write: () => true },
    stderr: {
      write(text: string) {
        err += text;
        if (text.includes('"event":"listening"')) listening((JSON.parse(text) as { url: string }).url);
        return true;
      },
    },
    stdin: Readable.from([]) as Io['stdin'],
    env: {},
    cwd: process.cwd(),
    signal: controller.signal,
  };
  const exited = run(['proxy', ...args, '--port', '0'], io);
  stops.push(async () => {
    controller.abort();
    await exited;
  });
  return { url: await started, stderr: () => err };
}

const call = { id: 'read:0', type: 'function', function: { name: 'read', arguments: '{}' } };
/** Valid for the openai profile the proxy repairs for, rejected by moonshot (ids unique per request): one heal retry. */
const healedByRetry = [
  { role: 'user', content: 'read' },
  { role: 'assistant', content: '', tool_calls: [call] },
  { role: 'tool', tool_call_id: 'read:0', content: 'one' },
  { role: 'user', content: 'again' },
  { role: 'assistant', content: '', tool_calls: [call] },
  { role: 'tool', tool_call_id: 'read:0', content: 'two' },
];
const toolUse = { type: 'tool_use', id: 'toolu_01A', name: 'Read', input: {} };
const anthropicBroken = [
  { role: 'user', content: 'read' },
  { role: 'assistant', content: [{ type: 'text', text: ' ' }, toolUse] },
  { role: 'user', content: 'never mind' },
];
/** Thinking on and the signed thinking block missing: nothing can be invented, the 400 goes back. */
const anthropicUnhealable = {
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  thinking: { type: 'enabled', budget_tokens: 1024 },
  messages: [
    { role: 'user', content: 'read' },
    { role: 'assistant', content: [toolUse] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A', content: 'x' }] },
  ],
};

test('no key form reaches a log line, /metrics or an error body, through repairs, a heal retry and errors', async () => {
  const chat = createEmulator({ profile: 'moonshot' });
  const anthropic = createEmulator({ wires: ['anthropic'] });
  const [chatServer, anthropicServer] = await Promise.all([chat.listen(), anthropic.listen()]);
  stops.push(chatServer.close, anthropicServer.close);
  const proxy = await startProxy([
    '--upstream',
    `chat=${chatServer.url}`,
    '--upstream',
    `anthropic=${anthropicServer.url}`,
    '--upstream',
    anthropicServer.url, // every other path (the Gemini-style ones here): answered 404 by the emulator
    '--max-body-bytes',
    '4000',
  ]);
  const dead = await startProxy(['--upstream', 'http://127.0.0.1:9']);

  const errorBodies: string[] = [];
  const statuses: number[] = [];
  const send = async (base: string, path: string, headers: Record<string, string>, body: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    statuses.push(response.status);
    if (response.status >= 400) errorBodies.push(text);
    return response.status;
  };
  const forms: [string, Record<string, string>, string][] = [
    ['bearer', { authorization: `Bearer ${KEYS.bearer}` }, '/v1/chat/completions'],
    ['x-api-key', { 'x-api-key': KEYS.anthropic, 'anthropic-version': '2023-06-01' }, '/v1/messages?beta=true'],
    ['x-goog-api-key', { 'x-goog-api-key': KEYS.goog }, '/v1beta/models/gemini-2.5-pro:generateContent'],
    ['key=', {}, `/v1beta/models/gemini-2.5-pro:generateContent?alt=sse&key=${KEYS.query}`],
  ];

  // Repairs and the heal retry, with the key of each wire.
  assert.equal(await send(proxy.url, forms[0]![2], forms[0]![1], { model: 'kimi-k2', messages: healedByRetry }), 200);
  assert.equal(
    await send(proxy.url, forms[1]![2], forms[1]![1], { model: 'm', max_tokens: 64, messages: anthropicBroken }),
    200,
  );
  assert.equal(await send(proxy.url, forms[1]![2], forms[1]![1], anthropicUnhealable), 400);
  for (const [, headers, path] of forms) {
    await send(proxy.url, path, headers, { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }); // the upstream's own answer
    assert.equal(await send(proxy.url, path, headers, { messages: [], pad: 'x'.repeat(5000) }), 413);
    assert.equal(await send(dead.url, path, headers, { messages: [{ role: 'user', content: 'hi' }] }), 502);
  }
  assert.deepEqual(
    chat.requests.slice(0, 2).map((request) => request.status),
    [400, 200],
    'the first chat request was rejected by moonshot and healed with one retry',
  );

  const metrics = await scrapeUntil(`${proxy.url}/metrics`, /unstuck_proxy_heal_retries_total\{wire="chat"\} 1/);
  const deadMetrics = await scrapeUntil(`${dead.url}/metrics`, /upstream_failures_total\{kind="unreachable"/);
  const logs = proxy.stderr() + dead.stderr();
  assert.ok(errorBodies.length >= 9, `${errorBodies.length} error bodies`);
  for (const [form, key] of Object.entries(KEYS)) {
    assert.ok(!logs.includes(key), `${form} key in a log line`);
    assert.ok(!metrics.includes(key) && !deadMetrics.includes(key), `${form} key in /metrics`);
    for (const body of errorBodies) assert.ok(!body.includes(key), `${form} key in an error body: ${body}`);
  }
  // The logged path keeps the query, with the key's value redacted.
  assert.match(logs, /"path":"\/v1beta\/models\/gemini-2\.5-pro:generateContent\?alt=sse&key=REDACTED"/);
  assert.match(logs, /"path":"\/v1\/messages\?beta=true"/);
});

const responsesCall = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'exec_command', arguments: '{}' };
const geminiAsk = { role: 'user', parts: [{ text: 'read notes.md' }] };
const geminiCall = { role: 'model', parts: [{ functionCall: { name: 'read_file', args: { path: 'notes.md' } } }] };

test('on the Responses and Gemini wires too: Bearer, x-goog-api-key and ?key= never in a log line, /metrics or an error body', async () => {
  const emulator = createEmulator({ wires: ['responses', 'gemini'] });
  const server = await emulator.listen();
  stops.push(server.close);
  const proxy = await startProxy([
    '--upstream',
    `responses=${server.url}`,
    '--upstream',
    `gemini=${server.url}`,
    '--max-body-bytes',
    '4000',
  ]);
  const dead = await startProxy(['--upstream', 'http://127.0.0.1:9']);

  const errorBodies: string[] = [];
  const send = async (base: string, path: string, headers: Record<string, string>, body: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 400) errorBodies.push(text);
    return response.status;
  };
  const forms: [string, Record<string, string>, string, (broken: boolean) => unknown][] = [
    [
      'bearer',
      { authorization: `Bearer ${KEYS.bearer}` },
      '/v1/responses',
      (broken) => ({ model: 'gpt-5', input: broken ? [{ role: 'user', content: 'ls' }, responsesCall] : [] }),
    ],
    [
      'x-goog-api-key',
      { 'x-goog-api-key': KEYS.goog },
      '/v1beta/models/gemini-2.5-pro:generateContent',
      (broken) => ({ contents: broken ? [geminiAsk, geminiCall, geminiAsk] : [] }),
    ],
    [
      'key=',
      {},
      `/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=${KEYS.query}`,
      (broken) => ({ contents: broken ? [geminiAsk, geminiCall, geminiAsk] : [] }),
    ],
  ];
  for (const [form, headers, path, body] of forms) {
    const before = emulator.requests.length;
    assert.equal(await send(proxy.url, path, headers, body(true)), 200, `${form}: repaired and answered`);
    assert.deepEqual(
      emulator.requests.slice(before).map((request) => request.violations),
      [[]],
    );
    assert.equal(await send(proxy.url, path, headers, { ...(body(true) as object), pad: 'x'.repeat(5000) }), 413);
    assert.equal(await send(dead.url, path, headers, body(true)), 502);
  }
  // A reasoning item whose following item is missing: repaired too (the emulator would say
  // `Item 'rs_1' of type 'reasoning' was provided without its required following item.`).
  const orphanReasoning = {
    model: 'gpt-5',
    input: [
      { role: 'user', content: 'x' },
      { type: 'reasoning', id: 'rs_1', summary: [] },
    ],
  };
  assert.equal(await send(proxy.url, forms[0]![2], forms[0]![1], orphanReasoning), 200);
  // 400s the proxy reads whole for the heal decision (the body is the wire's shape) and sends back
  // as they came: a Responses request without its model, an empty Gemini `contents`.
  assert.equal(await send(proxy.url, forms[0]![2], forms[0]![1], { input: [{ role: 'user', content: 'x' }] }), 400);
  assert.equal(await send(proxy.url, forms[1]![2], forms[1]![1], forms[1]![3](false)), 400);
  assert.equal(await send(proxy.url, forms[2]![2], forms[2]![1], forms[2]![3](false)), 400);

  const metrics = await scrapeUntil(`${proxy.url}/metrics`, /wire="gemini"/);
  const deadMetrics = await scrapeUntil(`${dead.url}/metrics`, /upstream_failures_total\{kind="unreachable"/);
  const logs = proxy.stderr() + dead.stderr();
  assert.match(logs, /"wire":"responses"/);
  assert.match(logs, /"wire":"gemini"/);
  assert.ok(errorBodies.length >= 9, `${errorBodies.length} error bodies`);
  for (const form of ['bearer', 'goog', 'query'] as const) {
    const key = KEYS[form];
    assert.ok(!logs.includes(key), `${form} key in a log line`);
    assert.ok(!metrics.includes(key) && !deadMetrics.includes(key), `${form} key in /metrics`);
    for (const body of errorBodies) assert.ok(!body.includes(key), `${form} key in an error body: ${body}`);
  }
  assert.match(logs, /"path":"\/v1beta\/models\/gemini-2\.5-pro:streamGenerateContent\?alt=sse&key=REDACTED"/);
});
