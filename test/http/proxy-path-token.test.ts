import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import type { ProxyLogEntry } from '../../src/http/index.js';
import { createProxyHandler, serveHandler, serveProxy } from '../../src/http/index.js';

/**
 * `pathToken`: a proxy that serves only requests whose path starts `/t/<token>`, as `unstuck run`
 * starts it. Both carriers (native node:http and the fetch handler on the generic carrier) ask the
 * same core, and both are checked: the token is stripped before forwarding, a request without it
 * is answered 403 in its wire's shape without reaching the upstream, and no log line holds it.
 */

const TOKEN = 'tok_0123456789abcdefXYZ';
const seen: string[] = [];
const upstream = createServer((incoming, outgoing) => {
  seen.push(incoming.url ?? '');
  incoming.resume().on('end', () => outgoing.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
});
upstream.listen(0, '127.0.0.1');
await once(upstream, 'listening');
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/base`;
after(() => new Promise<void>((resolve) => upstream.close(() => resolve())));

const carriers = {
  native: (log: (entry: ProxyLogEntry) => void) =>
    serveProxy({ upstream: upstreamUrl, pathToken: TOKEN, log }, { host: '127.0.0.1', port: 0 }),
  handler: (log: (entry: ProxyLogEntry) => void) =>
    serveHandler(createProxyHandler({ upstream: upstreamUrl, pathToken: TOKEN, log }), { host: '127.0.0.1', port: 0 }),
};

for (const [name, serve] of Object.entries(carriers)) {
  test(`${name} carrier: only /t/<token> requests are forwarded, the token stripped and never logged`, async () => {
    seen.length = 0;
    const logged: ProxyLogEntry[] = [];
    const proxy = await serve((entry) => logged.push(entry));
    try {
      const post = (path: string) =>
        fetch(`${proxy.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
          body: JSON.stringify({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] }),
        });
      const ok = await post(`/t/${TOKEN}/v1/messages?beta=true`);
      assert.equal(ok.status, 200);
      await ok.text();
      assert.deepEqual(seen, ['/base/v1/messages?beta=true']);
      for (const path of ['/v1/messages', '/t/tok_0123456789abcdefXYz/v1/messages', `/t/${TOKEN}0/v1/messages`]) {
        const refused = await post(path);
        assert.equal(refused.status, 403, path);
        assert.equal(((await refused.json()) as { type?: string }).type, 'error', `Anthropic's shape for ${path}`);
      }
      assert.equal((await fetch(`${proxy.url}/healthz`)).status, 403);
      assert.equal((await fetch(`${proxy.url}/t/${TOKEN}/healthz`)).status, 200);
      assert.deepEqual(seen, ['/base/v1/messages?beta=true'], 'no refused request reached the upstream');
      const text = JSON.stringify(logged);
      assert.ok(!text.includes(TOKEN), text);
      assert.deepEqual(
        logged.map((entry) => [entry.path, entry.status]),
        [
          ['/v1/messages?beta=true', 200],
          ['/v1/messages', 403],
          ['/t/[redacted]/v1/messages', 403],
          ['/t/[redacted]/v1/messages', 403],
          ['/healthz', 403],
          ['/healthz', 200],
        ],
      );
    } finally {
      await proxy.close();
    }
  });
}

test('a token too short to be a secret is refused when the proxy is built', () => {
  assert.throws(() => createProxyHandler({ upstream: upstreamUrl, pathToken: 'abc' }), /pathToken must be 16 or more/);
});

test("the SDKs behind the agents keep the token's path prefix of their base URL", async () => {
  // Claude Code (Anthropic SDK, ANTHROPIC_BASE_URL), Qwen Code and OpenAI-compatible tools (OpenAI
  // SDK, OPENAI_BASE_URL with /v1), Gemini CLI (@google/genai, GOOGLE_GEMINI_BASE_URL): each appends
  // its path to the base URL's path, so `/t/<token>` reaches the proxy in front of every request.
  seen.length = 0;
  const proxy = await serveProxy({ upstream: upstreamUrl, pathToken: TOKEN }, { host: '127.0.0.1', port: 0 });
  try {
    const base = `${proxy.url}/t/${TOKEN}`;
    const quiet = async (call: () => Promise<unknown>) => {
      try {
        await call();
      } catch {
        // The upstream answers `{}`: an SDK may reject it as a response; only the path it sent matters here.
      }
    };
    await quiet(() =>
      new Anthropic({ baseURL: base, apiKey: 'k', maxRetries: 0 }).messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    await quiet(() =>
      new OpenAI({ baseURL: `${base}/v1`, apiKey: 'k', maxRetries: 0 }).chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    await quiet(() =>
      new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: base } }).models.generateContent({
        model: 'gemini-2.5-flash',
        contents: 'hi',
      }),
    );
    assert.deepEqual(
      seen.map((url) => url.split('?')[0]),
      ['/base/v1/messages', '/base/v1/chat/completions', '/base/v1beta/models/gemini-2.5-flash:generateContent'],
    );
  } finally {
    await proxy.close();
  }
});
