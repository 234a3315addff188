import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { Step } from '../../src/emulator/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import type { ProxyHandlerOptions, ProxyLogEntry } from '../../src/http/index.js';
import { createNodeFetch, createProxyHandler, serveHandler, serveProxy } from '../../src/http/index.js';

/**
 * The proxy on the Anthropic Messages wire, run the same way on each path that carries it (the
 * handler in-process, the native server, the generic server), with the real `@anthropic-ai/sdk`
 * against the strict emulator on 127.0.0.1: a pass means the emulator (the core's Anthropic
 * rules at request scope) saw only valid requests.
 */

const MODES = ['in-process handler', 'native server', 'generic server'] as const;
type Mode = (typeof MODES)[number];
const MODEL = 'claude-sonnet-4-5';
const KEY = 'sk-ant-proxy-test-9f8e7d';

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

async function proxyIn(mode: Mode, options: ProxyHandlerOptions) {
  const nodeFetch = createNodeFetch();
  if (mode === 'in-process handler') {
    const handler = createProxyHandler({ ...options, fetch: nodeFetch });
    const send: typeof fetch = async (input, init) => handler(new Request(input, init));
    return { url: 'http://proxy.test', send };
  }
  const server =
    mode === 'native server'
      ? await serveProxy(options, { port: 0 })
      : await serveHandler(createProxyHandler({ ...options, fetch: nodeFetch }), { port: 0 });
  closers.push(server.close);
  assert.equal(server.native, mode === 'native server');
  return { url: server.url, send: fetch };
}

async function stack(mode: Mode, script: Step[] = []) {
  const emulator = createEmulator({ wires: ['anthropic'], script });
  const upstream = await emulator.listen();
  closers.push(upstream.close);
  const logs: ProxyLogEntry[] = [];
  const proxy = await proxyIn(mode, { upstream: upstream.url, log: (entry) => logs.push(entry) });
  const client = new Anthropic({
    apiKey: KEY,
    baseURL: proxy.url,
    maxRetries: 0,
    ...(proxy.send === fetch ? {} : { fetch: proxy.send }),
  });
  return { emulator, upstream, proxy, client, logs };
}

/** An upstream that records each request (path, headers, the exact bytes) and answers with `answer`. */
async function recordingUpstream(
  answer: (count: number) => { status: number; body: string } = () => ({ status: 200, body: '{}' }),
) {
  const seen: { url: string; headers: Record<string, string | string[] | undefined>; body: Buffer }[] = [];
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      seen.push({ url: incoming.url ?? '', headers: incoming.headers, body: Buffer.concat(chunks) });
      const { status, body } = answer(seen.length);
      outgoing.writeHead(status, { 'content-type': 'application/json' });
      outgoing.end(body);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(async () => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const call = { type: 'tool_use' as const, id: 'toolu_01A', name: 'Read', input: { file_path: '/a.txt' } };
const result = { type: 'tool_result' as const, tool_use_id: 'toolu_01A', content: 'hello' };
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
const valid: Anthropic.MessageParam[] = [
  { role: 'user', content: 'read /a.txt' },
  { role: 'assistant', content: [call] },
  { role: 'user', content: [result] },
];

for (const mode of MODES) {
  describe(mode, () => {
    test('a poisoned history through the real SDK: repaired on the way, the emulator saw only valid requests, logged by wire', async () => {
      const { emulator, upstream, client, logs } = await stack(mode, [{ text: 'one' }, { text: 'two' }]);
      // The control: straight at the emulator, each history gets Anthropic's 400.
      const straight = new Anthropic({ apiKey: KEY, baseURL: upstream.url, maxRetries: 0 });
      for (const messages of [whitespaceBesideCall, unanswered])
        await assert.rejects(
          straight.messages.create({ model: MODEL, max_tokens: 64, messages }),
          (error: unknown) => error instanceof Anthropic.BadRequestError,
        );
      for (const [messages, rule] of [
        [whitespaceBesideCall, 'text-block-empty'],
        [unanswered, 'tool-calls-unanswered'],
      ] as const) {
        const message = await client.messages.create({ model: MODEL, max_tokens: 64, messages });
        assert.equal(message.type, 'message');
        const last = emulator.requests.at(-1);
        assert.equal(last?.status, 200, JSON.stringify(last?.violations));
        const entry = logs.at(-1);
        assert.equal(entry?.wire, 'anthropic');
        assert.equal(entry?.path, '/v1/messages');
        assert.ok(entry?.rules.includes(rule), `${rule} in ${JSON.stringify(entry?.rules)}`);
      }
    });

    test('a stream is relayed event by event: the first event long before the upstream finishes', async () => {
      const text = 'a stream in many small pieces, slowly';
      const { client, emulator } = await stack(mode, [{ text, stream: { chunkSize: 4, delayMs: 40 } }]);
      const started = performance.now();
      const stream = client.messages.stream({ model: MODEL, max_tokens: 64, messages: unanswered });
      const kinds: string[] = [];
      let firstAt = 0;
      for await (const event of stream) {
        if (kinds.length === 0) firstAt = performance.now() - started;
        kinds.push(event.type);
      }
      const total = performance.now() - started;
      assert.equal(kinds[0], 'message_start');
      assert.ok(kinds.includes('content_block_delta'));
      assert.equal(kinds.at(-1), 'message_stop');
      assert.equal((await stream.finalMessage()).content[0]?.type, 'text');
      assert.ok(firstAt < total / 2, `first event at ${firstAt.toFixed(0)} ms of ${total.toFixed(0)} ms`);
      assert.deepEqual(emulator.requests.at(-1)?.violations, []);
    });

    test('a valid request goes out byte for byte, with its query and Anthropic headers; count_tokens too', async () => {
      const upstream = await recordingUpstream();
      const proxy = await proxyIn(mode, { upstream: `${upstream.url}/base` });
      // Odd spacing and key order: re-serialising would change these bytes.
      const body = `{ "max_tokens":64,"model":"${MODEL}",  "messages":${JSON.stringify(valid)} }`;
      const headers = {
        'content-type': 'application/json',
        'x-api-key': KEY,
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'prompt-caching-2024-07-31',
      };
      for (const path of ['/v1/messages?beta=true', '/v1/messages/count_tokens?beta=true']) {
        const response = await proxy.send(`${proxy.url}${path}`, { method: 'POST', headers, body });
        assert.equal(response.status, 200);
        await response.text();
        const seen = upstream.seen.at(-1);
        assert.equal(seen?.url, `/base${path}`);
        assert.equal(seen?.body.toString(), body);
        assert.equal(seen?.headers['x-api-key'], KEY);
        assert.equal(seen?.headers['anthropic-version'], '2023-06-01');
        assert.equal(seen?.headers['anthropic-beta'], 'prompt-caching-2024-07-31');
      }
    });

    test('a body that is not JSON, or not the Messages shape, goes out untouched', async () => {
      const upstream = await recordingUpstream();
      const proxy = await proxyIn(mode, { upstream: upstream.url });
      for (const body of ['{"messages": [', '{"prompt":"hi","messages":"not an array"}', '[1,2]']) {
        const response = await proxy.send(`${proxy.url}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        await response.text();
        assert.equal(upstream.seen.at(-1)?.body.toString(), body);
      }
    });

    test("the proxy's own errors come in Anthropic's shape, which the SDK reads: 413, 502", async () => {
      const upstream = await recordingUpstream();
      const small = await proxyIn(mode, { upstream: upstream.url, maxBodyBytes: 200 });
      const client = (url: string, send: typeof fetch) =>
        new Anthropic({ apiKey: KEY, baseURL: url, maxRetries: 0, ...(send === fetch ? {} : { fetch: send }) });
      await assert.rejects(
        client(small.url, small.send).messages.create({ model: MODEL, max_tokens: 64, messages: unanswered }),
        (error: unknown) => {
          assert.ok(error instanceof Anthropic.APIError);
          assert.equal(error.status, 413);
          assert.equal((error.error as { error?: { type?: string } }).error?.type, 'request_too_large');
          assert.match(error.message, /larger than 200 bytes/);
          return true;
        },
      );
      assert.equal(upstream.seen.length, 0);
      const gone = await proxyIn(mode, { upstream: 'http://127.0.0.1:9' });
      await assert.rejects(
        client(gone.url, gone.send).messages.create({ model: MODEL, max_tokens: 64, messages: valid }),
        (error: unknown) => {
          assert.ok(error instanceof Anthropic.APIError);
          assert.equal(error.status, 502);
          assert.equal((error.error as { error?: { type?: string } }).error?.type, 'api_error');
          assert.match(error.message, /unreachable/);
          return true;
        },
      );
    });

    test('an Anthropic 400 the repair cannot change goes back as it came, after exactly one attempt', async () => {
      const rejection = JSON.stringify({
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message:
            'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01A. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
        },
      });
      const upstream = await recordingUpstream(() => ({ status: 400, body: rejection }));
      const proxy = await proxyIn(mode, { upstream: upstream.url });
      const response = await proxy.send(`${proxy.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, max_tokens: 64, messages: valid }),
      });
      assert.equal(response.status, 400);
      assert.equal(await response.text(), rejection);
      assert.equal(upstream.seen.length, 1, 'nothing to change: not retried');
    });
  });
}

describe('one proxy in front of two providers', () => {
  test('--upstream anthropic=… and chat=…: Claude-style and OpenAI-style clients through one port, each to its own upstream', async () => {
    const anthropicUpstream = createEmulator({ wires: ['anthropic'], script: [{ text: 'from anthropic' }] });
    const chatUpstream = createEmulator({ profile: 'openai', script: [{ text: 'from openai' }] });
    const [a, c] = await Promise.all([anthropicUpstream.listen(), chatUpstream.listen()]);
    closers.push(a.close, c.close);
    const logs: ProxyLogEntry[] = [];
    const server = await serveProxy(
      { routes: { anthropic: a.url, chat: c.url }, log: (entry) => logs.push(entry) },
      { port: 0 },
    );
    closers.push(server.close);
    assert.equal(server.native, false, 'two origins: the generic path, which can reach either');
    const claude = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
    const message = await claude.messages.create({ model: MODEL, max_tokens: 64, messages: unanswered });
    assert.equal((message.content[0] as { text?: string }).text, 'from anthropic');
    const openai = new OpenAI({ apiKey: 'sk-openai-test', baseURL: `${server.url}/v1`, maxRetries: 0 });
    const completion = await openai.chat.completions.create({
      model: 'gpt-4o',
      messages: [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{}' } }],
        },
        { role: 'user', content: 'never mind' },
      ],
    });
    assert.equal(completion.choices[0]?.message.content, 'from openai');
    assert.deepEqual(
      [...anthropicUpstream.requests, ...chatUpstream.requests].map((request) => [request.wire, request.status]),
      [
        ['anthropic', 200],
        ['chat', 200],
      ],
    );
    assert.deepEqual(
      logs.map((entry) => [entry.wire, entry.status, entry.rules]),
      [
        ['anthropic', 200, ['tool-calls-unanswered']],
        ['chat', 200, ['tool-calls-unanswered']],
      ],
    );
    // A path no route names, and no bare --upstream: a 404 that says how to route it.
    const other = await fetch(`${server.url}/v1/models`);
    assert.equal(other.status, 404);
    assert.match(((await other.json()) as { error: { message: string } }).error.message, /no upstream/);
  });
});

/**
 * Every Anthropic case of the shared corpus through the proxy (as `unstuck proxy` serves it: the
 * native server) in front of the strict emulator, with the real SDK: each is answered with a 200
 * and the emulator saw only valid requests; except 033 with extended thinking on, whose signed
 * thinking block is missing and cannot be invented: that 400 comes back as it came.
 */
describe('the Anthropic corpus through the proxy', () => {
  const directory = new URL('../fixtures/shared/corpus/', import.meta.url);
  const cases = readdirSync(directory)
    .filter((name) => name.endsWith('.json'))
    .map((name) => ({
      name,
      ...(JSON.parse(readFileSync(new URL(name, directory), 'utf8')) as {
        format: string;
        kind: string[];
        messages: Anthropic.MessageParam[];
      }),
    }))
    .filter((entry) => entry.format === 'anthropic-messages');
  const thinkingOn = (name: string): boolean => name.startsWith('033-');

  test('has its Anthropic cases', () => assert.ok(cases.length >= 6, `${cases.length} cases`));

  for (const entry of cases) {
    test(`${entry.name}: ${thinkingOn(entry.name) ? 'with thinking on, the 400 (nothing to invent) comes back' : '200, the emulator saw only valid requests'}`, async () => {
      const { emulator, client } = await stack('native server');
      const request = {
        model: MODEL,
        max_tokens: 2048,
        messages: entry.messages,
        ...(thinkingOn(entry.name) ? { thinking: { type: 'enabled' as const, budget_tokens: 1024 } } : {}),
      };
      if (thinkingOn(entry.name)) {
        await assert.rejects(
          client.messages.create(request),
          (error: unknown) => error instanceof Anthropic.BadRequestError,
        );
        assert.equal(emulator.requests.length, 1);
        return;
      }
      const message = await client.messages.create(request);
      assert.equal(message.type, 'message');
      assert.deepEqual(
        emulator.requests.map((seen) => [seen.status, seen.violations.length]),
        [[200, 0]],
      );
    });
  }
});
