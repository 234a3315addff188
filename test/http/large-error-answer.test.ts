import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import {
  createNodeFetch,
  createProxyHandler,
  createSanitizingFetch,
  serveHandler,
  serveProxy,
} from '../../src/http/index.js';
import { rawRequest } from './support/raw-client.js';

/**
 * A 400 on the chat path is read whole for the heal decision. One of 256 MiB (an upstream that
 * errs, or lies) must not be held: it is relayed as it comes, memory stays flat and /healthz keeps
 * answering. The process's RSS is sampled while the answer passes; everything (upstream, proxy,
 * client) runs in this process, so the figure is an upper bound of what the proxy holds.
 */

const ERROR_BYTES = 256 * 1024 * 1024;
/** A first, smaller answer through the same path, so loading code and first allocations are not counted. */
const WARM_UP_BYTES = 16 * 1024 * 1024;
const ALLOWED_GROWTH = 64 * 1024 * 1024;
const CHAT_BODY = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });

const upstream = createServer((incoming, outgoing) => {
  incoming.resume();
  const size = incoming.url?.endsWith('?warm-up') === true ? WARM_UP_BYTES : ERROR_BYTES;
  outgoing.writeHead(400, { 'content-type': 'application/json', 'content-length': String(size) });
  const block = Buffer.alloc(1024 * 1024, 0x20);
  let sent = 0;
  const more = (): void => {
    while (sent < size) {
      sent += block.length;
      if (!outgoing.write(block)) {
        outgoing.once('drain', more);
        return;
      }
    }
    outgoing.end();
  };
  more();
});
upstream.listen(0, '127.0.0.1');
await once(upstream, 'listening');
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
after(() => upstream.close());

/** Runs `work` while sampling RSS and the event loop's lag; returns the RSS growth over the start and the worst lag. */
async function measured(work: () => Promise<void>): Promise<{ growth: number; lagMs: number }> {
  globalThis.gc?.();
  const start = process.memoryUsage().rss;
  let peak = start;
  let lagMs = 0;
  let last = performance.now();
  const sampler = setInterval(() => {
    const now = performance.now();
    lagMs = Math.max(lagMs, now - last - 10);
    last = now;
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  return { growth: peak - start, lagMs };
}

test('createSanitizingFetch: a 256 MiB 400 comes back as a response still to be read, not read into memory', async () => {
  const sanitizing = createSanitizingFetch();
  await (
    await sanitizing(`${upstreamUrl}/v1/chat/completions?warm-up`, { method: 'POST', body: CHAT_BODY })
  ).arrayBuffer();
  const figures = await measured(async () => {
    const response = await sanitizing(`${upstreamUrl}/v1/chat/completions`, {
      method: 'POST',
      body: CHAT_BODY,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.status, 400);
    let bytes = 0;
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.byteLength;
    assert.equal(bytes, ERROR_BYTES);
  });
  process.stderr.write(`sanitizing fetch: RSS growth ${(figures.growth / 2 ** 20).toFixed(1)} MiB\n`);
  assert.ok(figures.growth < ALLOWED_GROWTH, `RSS grew ${(figures.growth / 2 ** 20).toFixed(1)} MiB`);
});

for (const carrier of ['native server', 'generic server'] as const) {
  test(`${carrier}: a 256 MiB 400 on the chat path is relayed whole with flat memory`, async () => {
    const server =
      carrier === 'native server'
        ? await serveProxy({ upstream: upstreamUrl }, { port: 0 })
        : await serveHandler(createProxyHandler({ upstream: upstreamUrl, fetch: createNodeFetch() }), { port: 0 });
    try {
      await rawRequest(`${server.url}/v1/chat/completions?warm-up`, { method: 'POST', body: CHAT_BODY, keep: false });
      const figures = await measured(async () => {
        const answer = await rawRequest(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          body: CHAT_BODY,
          keep: false,
        });
        assert.equal(answer.status, 400);
        assert.equal(answer.bytes, ERROR_BYTES);
        assert.equal(answer.cut, false);
      });
      process.stderr.write(
        `${carrier}: RSS growth ${(figures.growth / 2 ** 20).toFixed(1)} MiB, worst event-loop lag ${figures.lagMs.toFixed(0)} ms\n`,
      );
      assert.ok(figures.growth < ALLOWED_GROWTH, `RSS grew ${(figures.growth / 2 ** 20).toFixed(1)} MiB`);
      assert.ok(figures.lagMs < 1000, `the event loop stalled ${figures.lagMs.toFixed(0)} ms`);
    } finally {
      await server.close();
    }
  });
}
