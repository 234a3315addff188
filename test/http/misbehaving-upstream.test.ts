import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { ProxyLogEntry } from '../../src/http/index.js';
import { createNodeFetch, createProxyHandler, serveHandler, serveProxy } from '../../src/http/index.js';
import { listenMisbehaving, SCENARIOS } from './support/misbehaving-upstream.js';
import type { RawAnswer } from './support/raw-client.js';
import { rawRequest } from './support/raw-client.js';

/**
 * Every way an upstream answer can go wrong, through each carrier of the proxy: the native server
 * (as `unstuck proxy` runs it), the generic server (the handler behind node:http, over
 * createNodeFetch) and the handler itself, in-process (a `Request` in, a `Response` out). Whatever the upstream sends, the client gets that answer, a cut answer it can
 * tell from a complete one, or a 502 in the OpenAI error shape — and the proxy goes on serving.
 * The compressed cases are sent with `Connection: close` in one write, the way the undici
 * `assert(!this.paused)` crash was found; each is read once at full speed and once by a client
 * that stops reading for a while (the upstream then closes while its answer is held back).
 */

const upstream = await listenMisbehaving();
after(() => upstream.close());

const CARRIERS = ['native server', 'generic server', 'in-process handler'] as const;

/** The in-process handler as a client sees it: a `Response`, its body read (after `slowMs`) until it ends or errors. */
async function viaHandler(
  handler: (request: Request) => Promise<Response>,
  url: string,
  options: { method?: string; body?: string; slowMs?: number; keep?: boolean },
): Promise<RawAnswer> {
  const response = await handler(
    new Request(url, {
      method: options.method ?? 'GET',
      ...(options.body === undefined ? {} : { body: options.body, headers: { 'content-type': 'application/json' } }),
    }),
  );
  if (options.slowMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.slowMs));
  const chunks: Buffer[] = [];
  let bytes = 0;
  let cut = false;
  try {
    for await (const chunk of (response.body ?? []) as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      if (options.keep !== false) chunks.push(Buffer.from(chunk));
    }
  } catch {
    cut = true;
  }
  return { status: response.status, headers: {}, body: Buffer.concat(chunks), bytes, cut };
}
const CHAT_BODY = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });

for (const carrier of CARRIERS) {
  describe(carrier, async () => {
    const logs: ProxyLogEntry[] = [];
    const options = { upstream: upstream.url, log: (entry: ProxyLogEntry) => logs.push(entry) };
    const handler = createProxyHandler({ ...options, fetch: createNodeFetch() });
    const served =
      carrier === 'in-process handler'
        ? undefined
        : carrier === 'native server'
          ? await serveProxy(options, { port: 0 })
          : await serveHandler(handler, { port: 0 });
    after(() => served?.close());
    assert.equal(served?.native ?? false, carrier === 'native server');
    const base = served?.url ?? 'http://proxy.test';
    const send = (url: string, options: Parameters<typeof rawRequest>[1] = {}): Promise<RawAnswer> =>
      served === undefined ? viaHandler(handler, url, options) : rawRequest(url, options);

    for (const [name, scenario] of Object.entries(SCENARIOS)) {
      const readers = name.startsWith('gzip-bomb') || name === 'huge-400' ? [0] : [0, 200];
      for (const slowMs of readers) {
        test(`${name}${slowMs > 0 ? ', read by a slow client' : ''}`, async () => {
          // The 400s go to the chat path with a chat body, so the proxy reads them for its heal decision.
          const chat = scenario.expect !== undefined && 'status' in scenario.expect && scenario.expect.status === 400;
          const answer = await send(`${base}/v1/${chat ? 'chat/completions' : 'models'}?s=${name}`, {
            ...(chat ? { method: 'POST', body: CHAT_BODY } : {}),
            ...(slowMs > 0 ? { slowMs } : {}),
            keep: !('bodyBytes' in scenario.expect),
          });
          const expect =
            carrier === 'native server'
              ? scenario.expect
              : ((carrier === 'in-process handler' ? scenario.handlerExpect : undefined) ??
                scenario.fetchExpect ??
                scenario.expect);
          if (carrier === 'in-process handler' && 'cut' in expect && answer.status === 502) return; // failed before its body, as on the servers
          if ('failedStatus' in expect) {
            assert.equal(answer.status, 502);
            assert.equal(
              (JSON.parse(answer.body.toString()) as { error: { code: string } }).error.code,
              'upstream_unreachable',
            );
          } else {
            if ('cut' in expect) {
              // Cut before anything reached the client (a compressed body waits for its first decoded bytes): a 502.
              if (answer.status !== 502) assert.equal(answer.status, expect.status);
              if (answer.status !== 502) assert.equal(answer.cut, true, 'a cut answer must not look complete');
            } else {
              assert.equal(answer.status, expect.status);
              assert.equal(answer.cut, false);
              if (expect.body !== undefined)
                assert.ok(
                  answer.body.equals(expect.body),
                  `body differs: ${answer.body.length} bytes, expected ${expect.body.length}`,
                );
              if (expect.bodyBytes !== undefined) assert.equal(answer.bytes, expect.bodyBytes);
            }
          }
          const health = await send(`${base}/healthz`);
          assert.equal(health.status, 200, 'the proxy still serves');
        });
      }
    }

    test('every exchange ended with one log line', () => {
      const forwarded = logs.filter((entry) => entry.path !== '/healthz');
      assert.equal(
        forwarded.length,
        Object.keys(SCENARIOS).reduce(
          (sum, name) => sum + (name.startsWith('gzip-bomb') || name === 'huge-400' ? 1 : 2),
          0,
        ),
      );
    });
  });
}
