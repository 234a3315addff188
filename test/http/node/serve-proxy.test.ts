import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createEmulator } from '../../../src/emulator/index.js';
import type { ProxyLogEntry } from '../../../src/http/index.js';
import { createNodeFetch, createProxyHandler, serveHandler, serveProxy } from '../../../src/http/index.js';
import { scrapeUntil } from '../support/scrape-metrics.js';

/** Which carrier serves the proxy is the caller's choice, never read off the handler or its fetch. */

test('serveProxy builds the native relay from the proxy options: it forwards, logs through them and answers /healthz', async (t) => {
  const emulator = createEmulator({ profile: 'openai' });
  const upstream = await emulator.listen();
  t.after(() => upstream.close());
  const logs: ProxyLogEntry[] = [];
  const server = await serveProxy({ upstream: upstream.url, log: (entry) => logs.push(entry) }, { port: 0 });
  t.after(() => server.close());
  assert.equal(server.native, true);
  const models = await fetch(`${server.url}/v1/models`);
  assert.equal(models.status, 200);
  assert.equal(((await models.json()) as { object: string }).object, 'list');
  assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
  assert.equal(logs.length, 2);
  // The native server answers /metrics from a snapshot that catches up within 100 ms; each scrape
  // is itself a request it counts, so at least the two above.
  await scrapeUntil(
    `${server.url}/metrics`,
    /^unstuck_proxy_requests_total\{[^}]*status="200"[^}]*\} ([2-9]|\d{2,})$/m,
  );
});

test('a wrapper around the proxy handler is carried as written: its own code runs, even over createNodeFetch', async (t) => {
  const emulator = createEmulator({ profile: 'openai' });
  const upstream = await emulator.listen();
  t.after(() => upstream.close());
  const handler = createProxyHandler({ upstream: upstream.url, fetch: createNodeFetch() });
  // Object.assign copies the handler's own properties onto the wrapper (its metrics, and any mark a
  // carrier might have looked for): the wrapper must still be what answers.
  const wrapped = Object.assign(async (request: Request) => {
    const response = await handler(request);
    const headers = new Headers(response.headers);
    headers.set('x-wrapped', 'yes');
    return new Response(response.body, { status: response.status, headers });
  }, handler);
  const server = await serveHandler(wrapped, { port: 0 });
  t.after(() => server.close());
  assert.equal(server.native, false);
  const response = await fetch(`${server.url}/v1/models`);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('x-wrapped'), 'yes');
});
