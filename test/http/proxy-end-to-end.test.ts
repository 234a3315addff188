import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, test } from 'node:test';
import OpenAI from 'openai';
import { profileNames, repair } from '../../src/core/index.js';
import type { Message, ProfileName } from '../../src/core/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import type { Step } from '../../src/emulator/index.js';
import type { ProxyHandlerOptions, ProxyLogEntry } from '../../src/http/index.js';
import { createNodeFetch, createProxyHandler, serveProxy } from '../../src/http/index.js';

/** Real sockets on 127.0.0.1: the emulator listening as the upstream, the proxy in front of it, real clients. */

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

async function stack(options: { profile?: ProfileName; script?: Step[]; proxy?: Partial<ProxyHandlerOptions> } = {}) {
  const emulator = createEmulator({ profile: options.profile ?? 'openai', script: options.script ?? [] });
  const upstream = await emulator.listen();
  closers.push(upstream.close);
  const logs: ProxyLogEntry[] = [];
  const handler = createProxyHandler({ upstream: upstream.url, fetch: createNodeFetch(), log: (entry) => logs.push(entry), ...(options.profile === undefined ? {} : { profile: options.profile }), ...options.proxy });
  const proxy = await serveProxy(handler, { port: 0 });
  closers.push(proxy.close);
  const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  return { emulator, proxy, client, logs, handler };
}

const hello: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hello' }];

// --- the corpus -------------------------------------------------------------------------------

interface Case { file: string; provider: string; valid?: boolean; format: string; messages: unknown[] }
const corpusDir = join(import.meta.dirname, '../fixtures/shared/corpus');
const cases: Case[] = readdirSync(corpusDir)
  .filter((file) => file.endsWith('.json'))
  .map((file) => ({ file, ...(JSON.parse(readFileSync(join(corpusDir, file), 'utf8')) as Omit<Case, 'file'>) }))
  .filter((entry) => entry.format === 'openai-chat' && entry.valid !== true);

const PROFILES: readonly ProfileName[] = profileNames;

/** The case's own provider when the emulator plays it, else the first emulated provider that rejects it. */
async function providerThatRejects(entry: Case): Promise<ProfileName | undefined> {
  const order = PROFILES.includes(entry.provider as ProfileName) ? [entry.provider as ProfileName, ...PROFILES] : PROFILES;
  for (const profile of order) {
    const response = await createEmulator({ profile }).handle(new Request('http://x/v1/chat/completions', { method: 'POST', body: JSON.stringify(bodyFor(entry)) }));
    if (response.status === 400 || response.status === 422) return profile;
  }
  return undefined;
}

/** DeepSeek's cases are about thinking mode (reasoning_content), so they are sent with thinking on. */
function bodyFor(entry: Case): Record<string, unknown> {
  return { model: 'emulated-model', messages: entry.messages, ...(entry.provider === 'deepseek' ? { thinking: { type: 'enabled' } } : {}) };
}

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
    if (current === undefined) stacks.set(profile, (current = await stack({ profile })));
    const body = bodyFor(entry);
    const thinking = entry.provider === 'deepseek' ? { thinking: true } : {};
    const remaining = repair(entry.messages as Message[], { profile, scope: 'request', model: 'emulated-model', ...thinking }).remaining;
    if (remaining.length > 0) {
      // What the core will not repair without inventing content (a request ending with the
      // assistant's own answer): forwarded as it is, and the provider's own 400 reaches the client.
      await assert.rejects(current.client.chat.completions.create(body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming), (error: unknown) => error instanceof OpenAI.APIError && error.status === 400);
      leftToCaller.push(`${entry.file} (${profile}: ${remaining.map((violation) => violation.rule).join(', ')})`);
      continue;
    }
    const response = await current.client.chat.completions.create(body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
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

// --- streaming ------------------------------------------------------------------------------

test('a stream arrives piece by piece: the first piece long before the upstream finishes', async () => {
  const { client } = await stack({ script: [{ text: 'abcdefghijklmnopqrstuvwxyz0123', stream: { chunkSize: 2, delayMs: 40 } }] });
  const started = performance.now();
  const arrivals: number[] = [];
  let text = '';
  for await (const chunk of await client.chat.completions.create({ model: 'gpt-4o', messages: hello, stream: true })) {
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

// --- upstream faults ------------------------------------------------------------------------

test('an upstream reset mid-stream reaches the client as an error, after the pieces sent so far, with no retry', async () => {
  const { client, emulator, logs } = await stack({ script: [{ text: 'partial answer that breaks', stream: { chunkSize: 4, delayMs: 30 }, fault: { disconnectAfterChunks: 3 } }] });
  let text = '';
  await assert.rejects(async () => {
    for await (const chunk of await client.chat.completions.create({ model: 'gpt-4o', messages: hello, stream: true })) text += chunk.choices[0]?.delta.content ?? '';
  });
  assert.ok(text.length > 0 && text.length < 'partial answer that breaks'.length, JSON.stringify(text));
  assert.equal(emulator.requests.length, 1);
  assert.equal(logs.at(-1)?.outcome, 'upstream-error');
});

test('500 and 429 with Retry-After reach the client as they are, each sent upstream once', async () => {
  const { client, emulator } = await stack({ script: [{ fault: { status: 500 } }, { fault: { status: 429, retryAfter: 2 } }] });
  await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: hello }), (error: unknown) => error instanceof OpenAI.APIError && error.status === 500);
  await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: hello }), (error: unknown) => {
    assert.ok(error instanceof OpenAI.APIError);
    assert.equal(error.status, 429);
    assert.equal(error.headers?.get('retry-after'), '2');
    return true;
  });
  assert.deepEqual(emulator.requests.map((request) => request.status), [500, 429]);
});

test('a silent upstream times out with a 504 the SDK can read, without hanging', async () => {
  const { client } = await stack({ script: [{ fault: { stall: 10_000 } }], proxy: { upstreamTimeoutMs: 200 } });
  const started = performance.now();
  await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: hello }), (error: unknown) => {
    assert.ok(error instanceof OpenAI.APIError);
    assert.equal(error.status, 504);
    assert.match(error.message, /sent nothing for 200 ms/);
    return true;
  });
  assert.ok(performance.now() - started < 3000);
});

test('an unreachable upstream is a 502 the SDK reads as an OpenAI error', async () => {
  const closed = await serveProxy(async () => new Response(''), { port: 0 });
  await closed.close(); // a port that was just free again: connection refused
  const proxy = await serveProxy(createProxyHandler({ upstream: closed.url, fetch: createNodeFetch() }), { port: 0 });
  closers.push(proxy.close);
  const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: hello }), (error: unknown) => {
    assert.ok(error instanceof OpenAI.APIError);
    assert.equal(error.status, 502);
    assert.equal(error.code, 'upstream_unreachable');
    return true;
  });
});

test('a slow-reading client still gets every byte, and a fast client beside it is not held up', async () => {
  const big = 'x'.repeat(300_000);
  const { proxy, client } = await stack({ script: [{ text: big, stream: { chunkSize: 3000 } }, { text: 'quick' }] });
  const url = new URL(proxy.url);
  const slow = new Promise<string>((resolve, reject) => {
    const request = httpRequest({ host: url.hostname, port: url.port, method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
        response.pause();
        setTimeout(() => response.resume(), 2);
      });
      response.on('end', () => resolve(body));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(JSON.stringify({ model: 'gpt-4o', stream: true, messages: hello }));
  });
  await new Promise((resolve) => setTimeout(resolve, 20));
  const quick = await client.chat.completions.create({ model: 'gpt-4o', messages: hello });
  assert.equal(quick.choices[0]?.message.content, 'quick');
  const body = await slow;
  assert.match(body, /data: \[DONE\]/);
  let text = '';
  for (const line of body.split('\n')) {
    if (!line.startsWith('data: {')) continue;
    text += (JSON.parse(line.slice(6)) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '';
  }
  assert.equal(text.length, big.length);
});

test('the body limit holds over a real socket: 413 in the OpenAI shape, nothing sent upstream', async () => {
  const { client, emulator } = await stack({ proxy: { maxBodyBytes: 10_000 } });
  await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'y'.repeat(20_000) }] }), (error: unknown) => {
    assert.ok(error instanceof OpenAI.APIError);
    assert.equal(error.status, 413);
    assert.equal(error.code, 'request_too_large');
    return true;
  });
  assert.equal(emulator.requests.length, 0);
  // The proxy still serves the next request.
  assert.equal((await client.chat.completions.create({ model: 'gpt-4o', messages: hello })).object, 'chat.completion');
});

test('a short load burst on loopback: no errors at 16 connections for 2 s', async () => {
  const { default: autocannon } = await import('autocannon');
  const { proxy } = await stack();
  const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'again' }] });
  const result = await autocannon({ url: `${proxy.url}/v1/chat/completions`, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections: 16, duration: 2 });
  assert.equal(result.errors, 0);
  assert.equal(result.timeouts, 0);
  assert.equal(result.non2xx, 0);
  assert.ok(result.requests.total > 100, `${result.requests.total} requests`);
});

test('curl-style `Expect: 100-continue` uploads go through (the proxy answers the expectation itself)', async () => {
  const { proxy, emulator } = await stack();
  const url = new URL(proxy.url);
  const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'z'.repeat(50_000) }] });
  const status = await new Promise<number>((resolve, reject) => {
    const request = httpRequest({ host: url.hostname, port: url.port, method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' } }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('continue', () => request.end(body));
    request.on('error', reject);
  });
  assert.equal(status, 200);
  assert.equal(emulator.requests.length, 1);
});
