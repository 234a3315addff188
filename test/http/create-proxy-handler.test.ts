import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createEmulator } from '../../src/emulator/index.js';
import type { ProxyLogEntry } from '../../src/http/index.js';
import { createProxyHandler } from '../../src/http/index.js';

const KEY = 'sk-unstuck-test-key-0123456789';
const SECRET_TEXT = 'the launch code is 7342';

const unanswered = [
  { role: 'user', content: SECRET_TEXT },
  {
    role: 'assistant',
    content: '',
    tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'foo', arguments: '{}' } }],
  },
  { role: 'user', content: 'never mind' },
];

function chat(body: unknown, headers: Record<string, string> = {}): Request {
  return new Request('http://127.0.0.1:8787/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

test('/healthz answers locally; /metrics serves Prometheus text', async () => {
  const handler = createProxyHandler({
    upstream: 'http://upstream.test',
    fetch: async () => assert.fail('nothing goes upstream'),
  });
  const health = await handler(new Request('http://p/healthz'));
  assert.deepEqual(await health.json(), { status: 'ok' });
  const metrics = await handler(new Request('http://p/metrics'));
  assert.match(metrics.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  assert.match(await metrics.text(), /^unstuck_proxy_requests_total\{status="200",wire="other"\} 1$/m);
});

test('forwards path and query under the upstream base path, end-to-end headers kept, hop-by-hop dropped', async () => {
  const seen: Request[] = [];
  const handler = createProxyHandler({
    upstream: 'http://upstream.test/api/v3/',
    fetch: async (input, init) => {
      seen.push(new Request(input, init));
      return new Response('{"data":[]}', {
        headers: {
          'content-type': 'application/json',
          connection: 'close',
          'keep-alive': 'timeout=5',
          'x-request-id': 'up-1',
        },
      });
    },
  });
  const response = await handler(
    new Request('http://127.0.0.1:8787/v1/models?limit=2', {
      headers: {
        authorization: `Bearer ${KEY}`,
        connection: 'keep-alive, x-private',
        'x-private': 'hop',
        'keep-alive': '5',
        'x-title': 'cline',
      },
    }),
  );
  assert.equal(response.status, 200);
  assert.equal(seen[0]?.url, 'http://upstream.test/api/v3/v1/models?limit=2');
  assert.equal(seen[0]?.headers.get('authorization'), `Bearer ${KEY}`);
  assert.equal(seen[0]?.headers.get('x-title'), 'cline');
  assert.equal(seen[0]?.headers.get('x-private'), null);
  assert.equal(seen[0]?.headers.get('keep-alive'), null);
  assert.equal(response.headers.get('x-request-id'), 'up-1');
  assert.equal(response.headers.get('keep-alive'), null);
  assert.equal(response.headers.get('connection'), null);
});

test('a broken chat request is repaired; the log line names the rules and holds neither key nor content', async () => {
  const emulator = createEmulator({ profile: 'openai' });
  const logs: ProxyLogEntry[] = [];
  const handler = createProxyHandler({
    upstream: 'http://upstream.test',
    profile: 'openai',
    fetch: emulator.fetch,
    log: (entry) => logs.push(entry),
  });
  const response = await handler(chat({ model: 'gpt-4o', messages: unanswered }));
  assert.equal(response.status, 200);
  await response.text();
  assert.equal(emulator.requests[0]?.violations.length, 0);
  assert.equal(logs.length, 1);
  const line = JSON.stringify(logs[0]);
  assert.deepEqual(logs[0]?.rules, ['tool-calls-unanswered']);
  assert.equal(logs[0]?.status, 200);
  assert.equal(logs[0]?.path, '/v1/chat/completions');
  assert.equal(typeof logs[0]?.durationMs, 'number');
  assert.equal(typeof logs[0]?.upstreamMs, 'number');
  assert.ok(!line.includes(KEY) && !line.includes(SECRET_TEXT), line);
  const metrics = await (await handler(new Request('http://p/metrics'))).text();
  assert.match(metrics, /^unstuck_proxy_repairs_total\{rule="tool-calls-unanswered",wire="chat"\} 1$/m);
  assert.match(metrics, /^unstuck_proxy_upstream_latency_seconds_count\{wire="chat"\} 1$/m);
});

test('--log-bodies puts the body in the log line, and still never the key', async () => {
  const emulator = createEmulator({ profile: 'openai' });
  const logs: ProxyLogEntry[] = [];
  const handler = createProxyHandler({
    upstream: 'http://upstream.test',
    fetch: emulator.fetch,
    logBodies: true,
    log: (entry) => logs.push(entry),
  });
  await (await handler(chat({ model: 'gpt-4o', messages: unanswered }))).text();
  const line = JSON.stringify(logs[0]);
  assert.ok(line.includes(SECRET_TEXT));
  assert.ok(!line.includes(KEY));
});

test('a body over the limit gets a 413 in the OpenAI error shape and never reaches the upstream', async () => {
  let sent = 0;
  const handler = createProxyHandler({
    upstream: 'http://upstream.test',
    maxBodyBytes: 1000,
    fetch: async () => {
      sent++;
      return new Response('');
    },
  });
  const big = { model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(5000) }] };
  const declared = await handler(chat(big));
  assert.equal(declared.status, 413);
  const error = (await declared.json()) as { error: { message: string; type: string; code: string } };
  assert.equal(error.error.code, 'request_too_large');
  // Without a Content-Length (a chunked upload), the limit still holds while reading.
  const bytes = new TextEncoder().encode(JSON.stringify(big));
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 512) controller.enqueue(bytes.slice(at, at + 512));
      controller.close();
    },
  });
  const chunked = await handler(
    new Request('http://p/v1/chat/completions', { method: 'POST', body, duplex: 'half' } as RequestInit),
  );
  assert.equal(chunked.status, 413);
  assert.equal(sent, 0);
});

test('an unreachable upstream is a 502 in the OpenAI error shape', async () => {
  const handler = createProxyHandler({
    upstream: 'http://upstream.test',
    fetch: async () => {
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      });
    },
  });
  const response = await handler(chat({ messages: [{ role: 'user', content: 'hi' }] }));
  assert.equal(response.status, 502);
  const error = (await response.json()) as { error: { message: string; type: string; code: string; param: null } };
  assert.equal(error.error.code, 'upstream_unreachable');
  assert.equal(error.error.type, 'server_error');
  assert.match(error.error.message, /ECONNREFUSED/);
});

test('an upstream silent past the timeout is a 504, promptly', async () => {
  const emulator = createEmulator({ profile: 'openai', script: [{ fault: { stall: 5000 } }] });
  const handler = createProxyHandler({
    upstream: 'http://upstream.test',
    fetch: emulator.fetch,
    upstreamTimeoutMs: 100,
  });
  const started = performance.now();
  const response = await handler(chat({ messages: [{ role: 'user', content: 'hi' }] }));
  assert.equal(response.status, 504);
  assert.ok(performance.now() - started < 2000);
  assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'upstream_timeout');
  assert.match(
    await (await handler(new Request('http://p/metrics'))).text(),
    /unstuck_proxy_upstream_failures_total\{kind="timeout",wire="chat"\} 1/,
  );
});

test('an upstream that goes silent mid-stream ends the stream with an error instead of hanging', async () => {
  const emulator = createEmulator({
    profile: 'openai',
    script: [{ text: 'a long answer, slowly', stream: { chunkSize: 2, delayMs: 1000 } }],
  });
  const logs: ProxyLogEntry[] = [];
  const handler = createProxyHandler({
    upstream: 'http://upstream.test',
    fetch: emulator.fetch,
    upstreamTimeoutMs: 150,
    log: (entry) => logs.push(entry),
  });
  const response = await handler(chat({ stream: true, messages: [{ role: 'user', content: 'hi' }] }));
  assert.equal(response.status, 200);
  await assert.rejects(response.text());
  assert.equal(logs[0]?.outcome, 'upstream-timeout');
});

test('429 with Retry-After and 500 reach the client as they are, with no retry', async () => {
  const emulator = createEmulator({
    profile: 'openai',
    script: [{ fault: { status: 429, retryAfter: 7 } }, { fault: { status: 500 } }],
  });
  const handler = createProxyHandler({ upstream: 'http://upstream.test', fetch: emulator.fetch });
  const limited = await handler(chat({ messages: [{ role: 'user', content: 'hi' }] }));
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get('retry-after'), '7');
  await limited.text();
  const failed = await handler(chat({ messages: [{ role: 'user', content: 'hi' }] }));
  assert.equal(failed.status, 500);
  await failed.text();
  assert.equal(emulator.requests.length, 2);
});

test('a 400 for a pairing rule the profile missed is healed once and counted', async () => {
  const emulator = createEmulator({ profile: 'moonshot' });
  const logs: ProxyLogEntry[] = [];
  const handler = createProxyHandler({
    upstream: 'http://upstream.test',
    profile: 'openai',
    fetch: emulator.fetch,
    log: (entry) => logs.push(entry),
  });
  const call = { id: 'read:0', type: 'function', function: { name: 'read', arguments: '{}' } };
  const messages = [
    { role: 'user', content: 'read' },
    { role: 'assistant', content: '', tool_calls: [call] },
    { role: 'tool', tool_call_id: 'read:0', content: 'one' },
    { role: 'user', content: 'again' },
    { role: 'assistant', content: '', tool_calls: [call] },
    { role: 'tool', tool_call_id: 'read:0', content: 'two' },
  ];
  const response = await handler(chat({ model: 'kimi-k2', messages }));
  assert.equal(response.status, 200);
  await response.text();
  assert.deepEqual(
    emulator.requests.map((request) => request.status),
    [400, 200],
  );
  assert.equal(logs[0]?.healRetry, true);
  assert.match(
    await (await handler(new Request('http://p/metrics'))).text(),
    /^unstuck_proxy_heal_retries_total\{wire="chat"\} 1$/m,
  );
});

test('the client going away aborts the upstream request', async () => {
  const emulator = createEmulator({
    profile: 'openai',
    script: [{ text: 'x'.repeat(400), stream: { chunkSize: 1, delayMs: 20 } }],
  });
  let upstreamSignal: AbortSignal | undefined;
  const handler = createProxyHandler({
    upstream: 'http://upstream.test',
    fetch: (input, init) => {
      upstreamSignal = init?.signal ?? undefined;
      return emulator.fetch(input, init);
    },
  });
  const client = new AbortController();
  const response = await handler(
    new Request('http://p/v1/chat/completions', {
      method: 'POST',
      body: JSON.stringify({ stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      signal: client.signal,
    }),
  );
  const reader = response.body!.getReader();
  await reader.read();
  assert.equal(upstreamSignal?.aborted, false);
  client.abort();
  assert.equal(upstreamSignal?.aborted, true);
  await reader.cancel();
});
