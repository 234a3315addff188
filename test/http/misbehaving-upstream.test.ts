import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { ProxyLogEntry } from '../../src/http/index.js';
import { createNodeFetch, createProxyHandler, serveProxy } from '../../src/http/index.js';
import { listenMisbehaving, SCENARIOS } from './support/misbehaving-upstream.js';
import { rawRequest } from './support/raw-client.js';

/**
 * Every way an upstream answer can go wrong, through each carrier of the proxy: the native server
 * (as `unstuck proxy` runs it) and the generic server (the handler behind node:http, over
 * createNodeFetch). Whatever the upstream sends, the client gets that answer, a cut answer it can
 * tell from a complete one, or a 502 in the OpenAI error shape — and the proxy goes on serving.
 * The compressed cases are sent with `Connection: close` in one write, the way the undici
 * `assert(!this.paused)` crash was found; each is read once at full speed and once by a client
 * that stops reading for a while (the upstream then closes while its answer is held back).
 */

const upstream = await listenMisbehaving();
after(() => upstream.close());

const CARRIERS = ['native server', 'generic server'] as const;
const CHAT_BODY = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });

for (const carrier of CARRIERS) {
  describe(carrier, async () => {
    const logs: ProxyLogEntry[] = [];
    const nodeFetch = createNodeFetch();
    const handler = createProxyHandler({ upstream: upstream.url, log: (entry) => logs.push(entry), fetch: carrier === 'native server' ? nodeFetch : (input, init) => nodeFetch(input, init) });
    const server = await serveProxy(handler, { port: 0 });
    after(() => server.close());
    assert.equal(server.native, carrier === 'native server');

    for (const [name, scenario] of Object.entries(SCENARIOS)) {
      const readers = name.startsWith('gzip-bomb') || name === 'huge-400' ? [0] : [0, 200];
      for (const slowMs of readers) {
        test(`${name}${slowMs > 0 ? ', read by a slow client' : ''}`, async () => {
          // The 400s go to the chat path with a chat body, so the proxy reads them for its heal decision.
          const chat = scenario.expect !== undefined && 'status' in scenario.expect && scenario.expect.status === 400;
          const answer = await rawRequest(`${server.url}/v1/${chat ? 'chat/completions' : 'models'}?s=${name}`, {
            ...(chat ? { method: 'POST', body: CHAT_BODY } : {}),
            ...(slowMs > 0 ? { slowMs } : {}),
            keep: !('bodyBytes' in scenario.expect),
          });
          const expect = carrier === 'native server' ? scenario.expect : (scenario.fetchExpect ?? scenario.expect);
          if ('failedStatus' in expect) {
            assert.equal(answer.status, 502);
            assert.equal((JSON.parse(answer.body.toString()) as { error: { code: string } }).error.code, 'upstream_unreachable');
          } else {
            if ('cut' in expect) {
              // Cut before anything reached the client (a compressed body waits for its first decoded bytes): a 502.
              if (answer.status !== 502) assert.equal(answer.status, expect.status);
              if (answer.status !== 502) assert.equal(answer.cut, true, 'a cut answer must not look complete');
            } else {
              assert.equal(answer.status, expect.status);
              assert.equal(answer.cut, false);
              if (expect.body !== undefined) assert.ok(answer.body.equals(expect.body), `body differs: ${answer.body.length} bytes, expected ${expect.body.length}`);
              if (expect.bodyBytes !== undefined) assert.equal(answer.bytes, expect.bodyBytes);
            }
          }
          const health = await rawRequest(`${server.url}/healthz`);
          assert.equal(health.status, 200, 'the proxy still serves');
        });
      }
    }

    test('every exchange ended with one log line', () => {
      const forwarded = logs.filter((entry) => entry.path !== '/healthz');
      assert.equal(forwarded.length, Object.keys(SCENARIOS).reduce((sum, name) => sum + (name.startsWith('gzip-bomb') || name === 'huge-400' ? 1 : 2), 0));
    });
  });
}
