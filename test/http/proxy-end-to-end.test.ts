import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { Message, ProfileName } from '../../src/core/index.js';
import { profileNames, repair } from '../../src/core/index.js';
import type { Step } from '../../src/emulator/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import type { ProxyHandlerOptions, ProxyLogEntry } from '../../src/http/index.js';
import { createNodeFetch, createProxyHandler, serveHandler, serveProxy } from '../../src/http/index.js';
import { scrapeUntil } from './support/scrape-metrics.js';

/**
 * The proxy's behaviour, run the same way against each path that carries it, so they cannot drift:
 * - the handler in-process (`createProxyHandler`, a fetch `Request` in, a `Response` out, no socket on the client side);
 * - the native server (`serveProxy` of the same options, as `unstuck proxy` runs it: node streams, no web objects);
 * - the generic server (`serveHandler` of that handler: the handler behind node:http).
 * The upstream is always the emulator listening on 127.0.0.1, reached through real sockets, with real clients.
 */

const MODES = ['in-process handler', 'native server', 'generic server'] as const;
type Mode = (typeof MODES)[number];
const KEY = 'sk-e2e-secret-key-5a4b3c2d1e';

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

/** A proxy in the given mode: its URL, a fetch that reaches it, an OpenAI client pointed at it. */
async function proxyIn(mode: Mode, options: ProxyHandlerOptions) {
  const nodeFetch = createNodeFetch();
  if (mode === 'in-process handler') {
    const handler = createProxyHandler({ ...options, fetch: nodeFetch });
    const send: typeof fetch = async (input, init) => handler(new Request(input, init));
    return {
      url: 'http://proxy.test',
      send,
      handler,
      client: new OpenAI({ baseURL: 'http://proxy.test/v1', apiKey: KEY, maxRetries: 0, fetch: send }),
    };
  }
  const handler = createProxyHandler({ ...options, fetch: nodeFetch });
  const server =
    mode === 'native server' ? await serveProxy(options, { port: 0 }) : await serveHandler(handler, { port: 0 });
  closers.push(server.close);
  assert.equal(server.native, mode === 'native server');
  return {
    url: server.url,
    send: fetch,
    handler,
    client: new OpenAI({ baseURL: `${server.url}/v1`, apiKey: KEY, maxRetries: 0 }),
  };
}

async function stack(
  mode: Mode,
  options: { profile?: ProfileName; script?: Step[]; proxy?: Partial<ProxyHandlerOptions> } = {},
) {
  const emulator = createEmulator({ profile: options.profile ?? 'openai', script: options.script ?? [] });
  const upstream = await emulator.listen();
  closers.push(upstream.close);
  const logs: ProxyLogEntry[] = [];
  const proxy = await proxyIn(mode, {
    upstream: upstream.url,
    log: (entry) => logs.push(entry),
    ...(options.profile === undefined ? {} : { profile: options.profile }),
    ...options.proxy,
  });
  return { emulator, proxy, client: proxy.client, logs };
}

const hello: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hello' }];

// --- the corpus -------------------------------------------------------------------------------

interface Case {
  file: string;
  provider: string;
  valid?: boolean;
  format: string;
  messages: unknown[];
}
const corpusDir = join(import.meta.dirname, '../fixtures/shared/corpus');
const cases: Case[] = readdirSync(corpusDir)
  .filter((file) => file.endsWith('.json'))
  .map((file) => ({ file, ...(JSON.parse(readFileSync(join(corpusDir, file), 'utf8')) as Omit<Case, 'file'>) }))
  .filter((entry) => entry.format === 'openai-chat' && entry.valid !== true);

const PROFILES: readonly ProfileName[] = profileNames;

/** The case's own provider when the emulator plays it, else the first emulated provider that rejects it. */
async function providerThatRejects(entry: Case): Promise<ProfileName | undefined> {
  const order = PROFILES.includes(entry.provider as ProfileName)
    ? [entry.provider as ProfileName, ...PROFILES]
    : PROFILES;
  for (const profile of order) {
    const response = await createEmulator({ profile }).handle(
      new Request('http://x/v1/chat/completions', { method: 'POST', body: JSON.stringify(bodyFor(entry)) }),
    );
    if (response.status === 400 || response.status === 422) return profile;
  }
  return undefined;
}

/** DeepSeek's cases are about thinking mode (reasoning_content), so they are sent with thinking on. */
function bodyFor(entry: Case): Record<string, unknown> {
  return {
    model: 'emulated-model',
    messages: entry.messages,
    ...(entry.provider === 'deepseek' ? { thinking: { type: 'enabled' } } : {}),
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** An upstream that answers every request with the same pairing 400, counting them: a heal that never helps. */
async function alwaysRejecting(): Promise<{ url: string; count: () => number }> {
  const text = JSON.stringify({
    error: {
      message:
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_x",
      type: 'invalid_request_error',
      param: 'messages',
      code: null,
    },
  });
  let count = 0;
  const server = createServer((incoming, outgoing) => {
    count += 1;
    incoming.resume();
    incoming.on('end', () => outgoing.writeHead(400, { 'content-type': 'application/json' }).end(text));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, count: () => count };
}

/** A POST over node:http, answered as a fetch `Response` (set-cookie kept one by one). */
function rawPost(url: string, headers: Record<string, string>, body: string): Promise<Response> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: target.hostname, port: target.port, method: 'POST', path: `${target.pathname}${target.search}`, headers },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => {
          const responseHeaders = new Headers();
          for (let index = 0; index + 1 < incoming.rawHeaders.length; index += 2)
            responseHeaders.append(incoming.rawHeaders[index] as string, incoming.rawHeaders[index + 1] as string);
          resolve(new Response(Buffer.concat(chunks), { status: incoming.statusCode ?? 0, headers: responseHeaders }));
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** A port that was just free again: connection refused. */
async function closedPort(): Promise<string> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return url;
}

for (const mode of MODES) {
  describe(mode, () => {
    test(`every broken openai-chat case of the corpus (${cases.length}) gets a 200 through the proxy, and the upstream sees only valid requests`, async () => {
      assert.ok(cases.length >= 15);
      const stacks = new Map<ProfileName, Awaited<ReturnType<typeof stack>>>();
      const healed: string[] = [];
      const leftToCaller: string[] = [];
      const acceptedEverywhere: string[] = [];
      for (const entry of cases) {
        const profile = await providerThatRejects(entry);
        if (profile === undefined) {
          // Broken only for a provider the emulator does not play (Anthropic's alternation, say).
          acceptedEverywhere.push(entry.file);
          continue;
        }
        let current = stacks.get(profile);
        if (current === undefined) {
          current = await stack(mode, { profile });
          stacks.set(profile, current);
        }
        const body = bodyFor(entry);
        const thinking = entry.provider === 'deepseek' ? { thinking: true } : {};
        const remaining = repair(entry.messages as Message[], {
          profile,
          scope: 'request',
          model: 'emulated-model',
          ...thinking,
        }).remaining;
        if (remaining.length > 0) {
          // What the core will not repair without inventing content (a request ending with the
          // assistant's own answer): forwarded as it is, and the provider's own 400 reaches the client.
          await assert.rejects(
            current.client.chat.completions.create(body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming),
            (error: unknown) => error instanceof OpenAI.APIError && error.status === 400,
          );
          leftToCaller.push(`${entry.file} (${profile}: ${remaining.map((violation) => violation.rule).join(', ')})`);
          continue;
        }
        const response = await current.client.chat.completions.create(
          body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming,
        );
        assert.equal(response.object, 'chat.completion', entry.file);
        assert.ok((current.logs.at(-1)?.rules.length ?? 0) > 0, `${entry.file}: the proxy reported no repair`);
        const sent = current.emulator.requests.at(-1);
        assert.equal(sent?.status, 200, entry.file);
        assert.deepEqual(sent?.violations, [], entry.file);
        healed.push(`${entry.file} (${profile})`);
      }
      const report = `healed: ${healed.length}\nleft to the caller: ${leftToCaller.join('; ')}\naccepted by every emulated provider: ${acceptedEverywhere.join(', ')}`;
      // Pinned: every case is healed today; a regression shows up here with the list, not silently.
      assert.equal(healed.length, cases.length, report);
    });

    test('a broken request is repaired; the log line names the rules and never holds the key or the content', async () => {
      const secret = 'the vault code is 5521';
      const { client, logs, emulator } = await stack(mode);
      const broken: OpenAI.ChatCompletionMessageParam[] = [
        { role: 'user', content: secret },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
        },
        { role: 'user', content: 'forget it' },
      ];
      assert.equal(
        (await client.chat.completions.create({ model: 'gpt-4o', messages: broken })).object,
        'chat.completion',
      );
      assert.deepEqual(emulator.requests.at(-1)?.violations, []);
      assert.equal(logs.length, 1);
      const entry = logs[0];
      assert.deepEqual(
        {
          method: entry?.method,
          path: entry?.path,
          status: entry?.status,
          rules: entry?.rules,
          healRetry: entry?.healRetry,
          outcome: entry?.outcome,
        },
        {
          method: 'POST',
          path: '/v1/chat/completions',
          status: 200,
          rules: ['tool-calls-unanswered'],
          healRetry: false,
          outcome: 'complete',
        },
      );
      assert.equal(typeof entry?.upstreamMs, 'number');
      assert.ok((entry?.requestBytes ?? 0) > 0);
      const line = JSON.stringify(logs);
      assert.ok(!line.includes(KEY) && !line.includes(secret), line);
    });

    test('a 400 for a pairing rule the profile missed is healed with one retry, logged and counted', async () => {
      const { client, emulator, logs, proxy } = await stack(mode, {
        profile: 'moonshot',
        proxy: { profile: 'openai' },
      });
      const call = { id: 'read:0', type: 'function' as const, function: { name: 'read', arguments: '{}' } };
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        { role: 'user', content: 'read' },
        { role: 'assistant', content: '', tool_calls: [call] },
        { role: 'tool', tool_call_id: 'read:0', content: 'one' },
        { role: 'user', content: 'again' },
        { role: 'assistant', content: '', tool_calls: [call] },
        { role: 'tool', tool_call_id: 'read:0', content: 'two' },
      ];
      assert.equal((await client.chat.completions.create({ model: 'kimi-k2', messages })).object, 'chat.completion');
      assert.deepEqual(
        emulator.requests.map((request) => request.status),
        [400, 200],
      );
      assert.equal(logs[0]?.healRetry, true);
      assert.equal(logs[0]?.status, 200);
      await scrapeUntil(`${proxy.url}/metrics`, /^unstuck_proxy_heal_retries_total\{wire="chat"\} 1$/m, proxy.send);
    });

    test('never more than one heal retry: a pairing 400 that keeps coming back reaches the client after the second attempt', async () => {
      const upstream = await alwaysRejecting();
      const logs: ProxyLogEntry[] = [];
      const { client } = await proxyIn(mode, { upstream: upstream.url, log: (entry) => logs.push(entry) });
      await assert.rejects(
        client.chat.completions.create({
          model: 'gpt-4o',
          messages: [
            { role: 'user', content: 'hi' },
            { role: 'user', content: 'hi' },
          ],
        }),
        (error: unknown) => {
          assert.ok(error instanceof OpenAI.APIError);
          assert.equal(error.status, 400);
          assert.match(error.message, /must be followed by tool messages/);
          return true;
        },
      );
      assert.equal(upstream.count(), 2); // the first attempt and exactly one heal
      assert.equal(logs[0]?.healRetry, true);
    });

    test('/healthz and /metrics are answered by the proxy itself', async () => {
      const { proxy, emulator } = await stack(mode);
      const health = await proxy.send(`${proxy.url}/healthz`);
      assert.deepEqual(await health.json(), { status: 'ok' });
      const metrics = await proxy.send(`${proxy.url}/metrics`);
      assert.match(metrics.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      await metrics.text();
      // At least the /healthz (the native server's snapshot may also count the first scrape by now).
      await scrapeUntil(
        `${proxy.url}/metrics`,
        /^unstuck_proxy_requests_total\{status="200",wire="other"\} [1-9]/m,
        proxy.send,
      );
      assert.equal(emulator.requests.length, 0);
    });

    test('a stream arrives piece by piece: the first piece long before the upstream finishes', async () => {
      const { client } = await stack(mode, {
        script: [{ text: 'abcdefghijklmnopqrstuvwxyz0123', stream: { chunkSize: 2, delayMs: 40 } }],
      });
      const started = performance.now();
      const arrivals: number[] = [];
      let text = '';
      for await (const chunk of await client.chat.completions.create({
        model: 'gpt-4o',
        messages: hello,
        stream: true,
      })) {
        const delta = chunk.choices[0]?.delta.content;
        if (delta) {
          arrivals.push(performance.now() - started);
          text += delta;
        }
      }
      const total = performance.now() - started;
      assert.equal(text, 'abcdefghijklmnopqrstuvwxyz0123');
      assert.ok(arrivals.length >= 10, `${arrivals.length} pieces`);
      assert.ok((arrivals[0] ?? total) < total / 4, `first piece at ${arrivals[0]} ms of ${total} ms`);
    });

    test('an upstream reset mid-stream reaches the client as an error, after the pieces sent so far, with no retry', async () => {
      const { client, emulator, logs } = await stack(mode, {
        script: [
          {
            text: 'partial answer that breaks',
            stream: { chunkSize: 4, delayMs: 30 },
            fault: { disconnectAfterChunks: 3 },
          },
        ],
      });
      let text = '';
      await assert.rejects(async () => {
        for await (const chunk of await client.chat.completions.create({
          model: 'gpt-4o',
          messages: hello,
          stream: true,
        }))
          text += chunk.choices[0]?.delta.content ?? '';
      });
      assert.ok(text.length > 0 && text.length < 'partial answer that breaks'.length, JSON.stringify(text));
      assert.equal(emulator.requests.length, 1);
      assert.equal(logs.at(-1)?.outcome, 'upstream-error');
    });

    test('500 and 429 with Retry-After reach the client as they are, each sent upstream once', async () => {
      const { client, emulator } = await stack(mode, {
        script: [{ fault: { status: 500 } }, { fault: { status: 429, retryAfter: 2 } }],
      });
      await assert.rejects(
        client.chat.completions.create({ model: 'gpt-4o', messages: hello }),
        (error: unknown) => error instanceof OpenAI.APIError && error.status === 500,
      );
      await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: hello }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.APIError);
        assert.equal(error.status, 429);
        assert.equal(error.headers?.get('retry-after'), '2');
        return true;
      });
      assert.deepEqual(
        emulator.requests.map((request) => request.status),
        [500, 429],
      );
    });

    test('a silent upstream times out with a 504 the SDK can read, without hanging', async () => {
      const { client, logs } = await stack(mode, {
        script: [{ fault: { stall: 10_000 } }],
        proxy: { upstreamTimeoutMs: 200 },
      });
      const started = performance.now();
      await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: hello }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.APIError);
        assert.equal(error.status, 504);
        assert.match(error.message, /sent nothing for 200 ms/);
        return true;
      });
      assert.ok(performance.now() - started < 3000);
      assert.equal(logs.at(-1)?.outcome, 'upstream-timeout');
    });

    test('an upstream that goes silent mid-stream ends the stream with an error instead of hanging', async () => {
      const { client, logs } = await stack(mode, {
        script: [{ text: 'a long answer, slowly', stream: { chunkSize: 2, delayMs: 1000 } }],
        proxy: { upstreamTimeoutMs: 150 },
      });
      const started = performance.now();
      await assert.rejects(async () => {
        for await (const chunk of await client.chat.completions.create({
          model: 'gpt-4o',
          messages: hello,
          stream: true,
        }))
          void chunk;
      });
      assert.ok(performance.now() - started < 3000);
      assert.equal(logs.at(-1)?.outcome, 'upstream-timeout');
    });

    test('an unreachable upstream is a 502 the SDK reads as an OpenAI error', async () => {
      const { client } = await proxyIn(mode, { upstream: await closedPort() });
      await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: hello }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.APIError);
        assert.equal(error.status, 502);
        assert.equal(error.code, 'upstream_unreachable');
        assert.equal((error.error as { type?: string } | undefined)?.type, 'server_error');
        return true;
      });
    });

    test('a slow-reading client still gets every byte, and a fast client beside it is not held up', async () => {
      const big = 'x'.repeat(300_000);
      const { proxy, client } = await stack(mode, {
        script: [{ text: big, stream: { chunkSize: 3000 } }, { text: 'quick' }],
      });
      const slow = (async () => {
        const response = await proxy.send(`${proxy.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: hello }),
        });
        const reader = response.body!.getReader();
        const decoder = new TextDecoder();
        let body = '';
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
          body += decoder.decode(chunk.value, { stream: true });
          await sleep(2);
        }
        return body;
      })();
      await sleep(20);
      const quick = await client.chat.completions.create({ model: 'gpt-4o', messages: hello });
      assert.equal(quick.choices[0]?.message.content, 'quick');
      const body = await slow;
      assert.match(body, /data: \[DONE\]/);
      let text = '';
      for (const line of body.split('\n')) {
        if (!line.startsWith('data: {')) continue;
        text +=
          (JSON.parse(line.slice(6)) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '';
      }
      assert.equal(text.length, big.length);
    });

    test('a client that leaves mid-stream ends the exchange: logged as client-closed', async () => {
      const { proxy, logs } = await stack(mode, {
        script: [{ text: 'y'.repeat(2000), stream: { chunkSize: 10, delayMs: 10 } }],
      });
      const controller = new AbortController();
      const response = await proxy.send(`${proxy.url}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: hello }),
        signal: controller.signal,
      });
      const reader = response.body!.getReader();
      await reader.read();
      controller.abort();
      await reader.cancel().catch(() => undefined);
      for (let waited = 0; logs.length === 0 && waited < 2000; waited += 10) await sleep(10);
      assert.equal(logs.at(-1)?.outcome, 'client-closed');
    });

    test('the body limit holds: 413 in the OpenAI shape, nothing sent upstream, the next request served', async () => {
      const { client, emulator, logs } = await stack(mode, { proxy: { maxBodyBytes: 10_000 } });
      await assert.rejects(
        client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'y'.repeat(20_000) }] }),
        (error: unknown) => {
          assert.ok(error instanceof OpenAI.APIError);
          assert.equal(error.status, 413);
          assert.equal(error.code, 'request_too_large');
          return true;
        },
      );
      assert.equal(emulator.requests.length, 0);
      assert.equal(logs.at(-1)?.outcome, 'too-large');
      assert.equal(
        (await client.chat.completions.create({ model: 'gpt-4o', messages: hello })).object,
        'chat.completion',
      );
    });

    test('any other path is forwarded under the upstream base path: query and end-to-end headers kept, hop-by-hop dropped both ways', async () => {
      const seen: { url?: string; headers?: Record<string, string | string[] | undefined>; body?: string } = {};
      const server = createServer((incoming, outgoing) => {
        let body = '';
        incoming.setEncoding('utf8');
        incoming.on('data', (chunk: string) => (body += chunk));
        incoming.on('end', () => {
          Object.assign(seen, { url: incoming.url, headers: incoming.headers, body });
          outgoing
            .writeHead(201, {
              'content-type': 'application/json',
              connection: 'keep-alive, x-upstream-hop',
              'x-upstream-hop': 'no',
              'keep-alive': 'timeout=99',
              'x-request-id': 'up-1',
              'set-cookie': ['a=1', 'b=2'],
            })
            .end('{"data":[]}');
        });
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      closers.push(async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      });
      const { send, url } = await proxyIn(mode, {
        upstream: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v3/`,
      });
      const headers = {
        authorization: `Bearer ${KEY}`,
        connection: 'keep-alive, x-private',
        'x-private': 'hop',
        'x-title': 'cline',
        'content-type': 'application/json',
      };
      // undici's fetch refuses a Connection header of its own, so a socket client sends this one raw.
      const response =
        mode === 'in-process handler'
          ? await send(`${url}/v1/embeddings?limit=2`, { method: 'POST', headers, body: '{"input":"hi"}' })
          : await rawPost(`${url}/v1/embeddings?limit=2`, headers, '{"input":"hi"}');
      assert.equal(response.status, 201);
      assert.equal(seen.url, '/api/v3/v1/embeddings?limit=2');
      assert.equal(seen.body, '{"input":"hi"}'); // not a chat request: forwarded as it came
      assert.equal(seen.headers?.authorization, `Bearer ${KEY}`);
      assert.equal(seen.headers?.['x-title'], 'cline');
      assert.equal(seen.headers?.['x-private'], undefined);
      assert.equal(response.headers.get('x-request-id'), 'up-1');
      assert.notEqual(response.headers.get('keep-alive'), 'timeout=99'); // our own server may send its own
      assert.equal(response.headers.get('x-upstream-hop'), null);
      assert.deepEqual(response.headers.getSetCookie(), ['a=1', 'b=2']);
      assert.deepEqual(await response.json(), { data: [] });
    });

    test('an upstream that compresses although asked for identity reaches the client decoded, without content-encoding', async () => {
      const { gzipSync } = await import('node:zlib');
      const server = createServer((incoming, outgoing) => {
        incoming.resume();
        incoming.on('end', () =>
          outgoing
            .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-upstream': 'yes' })
            .end(gzipSync('{"compressed":true}')),
        );
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      closers.push(async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      });
      const { send, url } = await proxyIn(mode, {
        upstream: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      });
      const response = await send(`${url}/v1/models`);
      assert.equal(response.headers.get('content-encoding'), null);
      assert.equal(response.headers.get('x-upstream'), 'yes');
      assert.deepEqual(await response.json(), { compressed: true });
    });

    if (mode === 'in-process handler') return; // what follows needs a socket on the client side

    test('a short load burst on loopback: no errors at 16 connections for 2 s', async () => {
      const { default: autocannon } = await import('autocannon');
      const { proxy } = await stack(mode);
      const body = JSON.stringify({
        model: 'gpt-4o',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'hello' },
          { role: 'user', content: 'again' },
        ],
      });
      const result = await autocannon({
        url: `${proxy.url}/v1/chat/completions`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        connections: 16,
        duration: 2,
      });
      assert.equal(result.errors, 0);
      assert.equal(result.timeouts, 0);
      assert.equal(result.non2xx, 0);
      assert.ok(result.requests.total > 100, `${result.requests.total} requests`);
    });

    test('curl-style `Expect: 100-continue` uploads go through (the proxy answers the expectation itself)', async () => {
      const { proxy, emulator } = await stack(mode);
      const url = new URL(proxy.url);
      const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'z'.repeat(50_000) }] });
      const status = await new Promise<number>((resolve, reject) => {
        const request = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            method: 'POST',
            path: '/v1/chat/completions',
            headers: {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
              expect: '100-continue',
            },
          },
          (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode ?? 0));
          },
        );
        request.on('continue', () => request.end(body));
        request.on('error', reject);
      });
      assert.equal(status, 200);
      assert.equal(emulator.requests.length, 1);
    });

    test('a chunked upload over the limit is refused while reading, and the 413 still reaches the client', async () => {
      const { proxy, emulator } = await stack(mode, { proxy: { maxBodyBytes: 4096 } });
      const url = new URL(proxy.url);
      const status = await new Promise<number>((resolve, reject) => {
        const request = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            method: 'POST',
            path: '/v1/chat/completions',
            headers: { 'transfer-encoding': 'chunked' },
          },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on('error', reject);
        for (let index = 0; index < 16; index += 1) request.write(Buffer.alloc(1024, 97));
        request.end();
      });
      assert.equal(status, 413);
      assert.equal(emulator.requests.length, 0);
    });
  });
}
