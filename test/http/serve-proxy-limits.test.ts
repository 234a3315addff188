import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { connect } from 'node:net';
import { after, describe, test } from 'node:test';
import type { ServeOptions } from '../../src/http/index.js';
import { createNodeFetch, createProxyHandler, serveHandler, serveProxy } from '../../src/http/index.js';
import { rawRequest } from './support/raw-client.js';

/**
 * What a client can do to the server side of the proxy, on both carriers: a `Host` that is not
 * ours (DNS rebinding), headers or a body that never end (slowloris), more connections than the
 * cap, and a stop while answers are still streaming.
 */

// An upstream that streams an SSE answer slowly: one event every 50 ms for `?events=N`.
const upstream = createServer((incoming, outgoing) => {
  incoming.resume();
  const events = Number(new URL(incoming.url ?? '/', 'http://x').searchParams.get('events') ?? '0');
  outgoing.writeHead(200, { 'content-type': events > 0 ? 'text/event-stream' : 'application/json' });
  if (events === 0) {
    outgoing.end('{"ok":true}');
    return;
  }
  let sent = 0;
  const timer = setInterval(() => {
    sent += 1;
    outgoing.write(`data: ${sent}\n\n`);
    if (sent === events) {
      clearInterval(timer);
      outgoing.end('data: [DONE]\n\n');
    }
  }, 50);
  outgoing.once('close', () => clearInterval(timer));
});
upstream.listen(0, '127.0.0.1');
await once(upstream, 'listening');
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
after(() => upstream.close());

async function proxy(carrier: string, options: ServeOptions = {}) {
  if (carrier === 'native server') return serveProxy({ upstream: upstreamUrl }, { port: 0, ...options });
  return serveHandler(createProxyHandler({ upstream: upstreamUrl, fetch: createNodeFetch() }), { port: 0, ...options });
}

/** Opens a raw connection and writes `text`; resolves when the proxy closes it, with what it answered and after how long. */
function rawConnection(
  port: number,
  text: string,
): { socket: Socket; closed: Promise<{ answer: string; ms: number }> } {
  const started = performance.now();
  const socket = connect(port, '127.0.0.1');
  socket.write(text);
  let answer = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (answer += chunk));
  socket.on('error', () => undefined);
  const closed = new Promise<{ answer: string; ms: number }>((resolve) =>
    socket.once('close', () => resolve({ answer, ms: performance.now() - started })),
  );
  return { socket, closed };
}

for (const carrier of ['native server', 'generic server'] as const) {
  describe(carrier, () => {
    test('Host: loopback names, the bound address and allowed names are served; any other name is a 421 in the OpenAI shape', async () => {
      const server = await proxy(carrier, { allowHosts: ['proxy.internal'] });
      try {
        const port = new URL(server.url).port;
        for (const host of [
          `127.0.0.1:${port}`,
          `localhost:${port}`,
          'LOCALHOST.',
          `[::1]:${port}`,
          '127.8.9.10',
          'proxy.internal',
          `proxy.internal:${port}`,
        ]) {
          const answer = await rawRequest(`${server.url}/v1/models`, { headers: { host } });
          assert.equal(answer.status, 200, host);
        }
        for (const host of [
          `attacker.example:${port}`,
          'localhost.attacker.example',
          '127.0.0.1.nip.io',
          `192.168.1.20:${port}`,
          'proxy.internal:x',
          '[::1]x',
        ]) {
          for (const path of ['/v1/models', '/metrics', '/healthz']) {
            const answer = await rawRequest(`${server.url}${path}`, { headers: { host } });
            assert.equal(answer.status, 421, `${host} ${path}`);
            assert.equal(
              (JSON.parse(answer.body.toString()) as { error: { code: string } }).error.code,
              'host_not_allowed',
            );
          }
        }
      } finally {
        await server.close();
      }
    });

    test('headers that never end are cut off at the headers timeout; a body that never ends at the request timeout', async () => {
      const server = await proxy(carrier, { headersTimeoutMs: 300, requestTimeoutMs: 800 });
      try {
        const port = Number(new URL(server.url).port);
        const slowloris = rawConnection(port, 'GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\n');
        const trickle = setInterval(() => slowloris.socket.write('x-more: 1\r\n'), 100);
        const endless = rawConnection(
          port,
          'POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
        );
        const drip = setInterval(() => endless.socket.write('1\r\n \r\n'), 50);
        try {
          const [headers, body] = await Promise.all([slowloris.closed, endless.closed]);
          // Node checks the timeouts once a second (connectionsCheckingInterval), so the cut comes within the timeout plus that.
          assert.ok(headers.ms < 300 + 2500, `headers held ${headers.ms.toFixed(0)} ms`);
          assert.ok(body.ms < 800 + 2500, `body held ${body.ms.toFixed(0)} ms`);
          assert.match(headers.answer, /^HTTP\/1\.1 408/);
          assert.match(body.answer, /^HTTP\/1\.1 408/);
        } finally {
          clearInterval(trickle);
          clearInterval(drip);
        }
        assert.equal((await rawRequest(`${server.url}/healthz`)).status, 200);
      } finally {
        await server.close();
      }
    });

    test('connections beyond the cap are refused at accept; the ones held are still served', async () => {
      const server = await proxy(carrier, { maxConnections: 3 });
      try {
        const port = Number(new URL(server.url).port);
        const held = [0, 1, 2].map(() => rawConnection(port, 'GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n'));
        await new Promise((resolve) => setTimeout(resolve, 200));
        const refused = rawConnection(port, 'GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
        const { answer } = await refused.closed;
        assert.equal(answer, '', 'the fourth connection gets nothing');
        for (const connection of held) connection.socket.destroy();
        await Promise.all(held.map((connection) => connection.closed));
        assert.equal((await rawRequest(`${server.url}/healthz`)).status, 200);
      } finally {
        await server.close();
      }
    });

    test('a body over the limit sent at full speed: the client reads its 413 every time; one that never ends is closed soon after', async () => {
      const options = { upstream: upstreamUrl, maxBodyBytes: 1024 * 1024 };
      const server =
        carrier === 'native server'
          ? await serveProxy(options, { port: 0 })
          : await serveHandler(createProxyHandler({ ...options, fetch: createNodeFetch() }), { port: 0 });
      try {
        const port = Number(new URL(server.url).port);
        const block = `${(256 * 1024).toString(16)}\r\n${'a'.repeat(256 * 1024)}\r\n`;
        const upload = (blocks: number): Promise<{ answer: string; ms: number }> => {
          const connection = rawConnection(
            port,
            'POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
          );
          let sent = 0;
          const more = (): void => {
            while (sent < blocks && !connection.socket.destroyed) {
              sent += 1;
              if (!connection.socket.write(block)) {
                connection.socket.once('drain', more);
                return;
              }
            }
            if (Number.isFinite(blocks)) connection.socket.end('0\r\n\r\n');
          };
          more();
          return connection.closed;
        };
        for (let attempt = 0; attempt < 10; attempt += 1) {
          const { answer } = await upload(40); // 10 MiB against a 1 MiB limit
          assert.match(answer, /^HTTP\/1\.1 413 /, `attempt ${attempt}: ${JSON.stringify(answer.slice(0, 60))}`);
        }
        const endless = await upload(Infinity);
        assert.match(endless.answer, /^HTTP\/1\.1 413 /);
        assert.ok(endless.ms < 5000 + 2000, `an endless body was read for ${endless.ms.toFixed(0)} ms after its 413`);
      } finally {
        await server.close();
      }
    });

    test('shutdown drains: a stream in flight ends whole, a new connection is refused, one longer than the drain bound is cut', async () => {
      const server = await proxy(carrier);
      const port = Number(new URL(server.url).port);
      const short = rawRequest(`${server.url}/v1/chat/completions?events=6`, { method: 'POST', body: '{}' });
      const long = rawRequest(`${server.url}/v1/chat/completions?events=200`, { method: 'POST', body: '{}' });
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(server.inFlight, 2);
      const stopped = server.shutdown({ drainMs: 1000 });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const late = rawConnection(port, 'GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
      const [shortAnswer, longAnswer, { cut }, lateAnswer] = await Promise.all([short, long, stopped, late.closed]);
      assert.equal(shortAnswer.cut, false);
      assert.match(shortAnswer.body.toString(), /data: 6\n\ndata: \[DONE\]/);
      assert.equal(longAnswer.cut, true);
      assert.equal(cut, 1);
      assert.equal(lateAnswer.answer, '');
    });
  });
}
