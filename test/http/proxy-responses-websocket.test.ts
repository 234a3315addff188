import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import type { ProxyLogEntry } from '../../src/http/index.js';
import { createProxyHandler, serveHandler, serveProxy } from '../../src/http/index.js';
import { useListeningEmulator } from '../support/listening-emulator.js';

/**
 * Codex opens a WebSocket on `GET …/v1/responses` (Upgrade: websocket) before it POSTs. The proxy
 * relays no WebSocket: it answers the handshake itself with 426 Upgrade Required, the status on
 * which Codex falls back to HTTP at once (codex-rs/core/src/client.rs, `FallbackToHttp`), and
 * nothing reaches the upstream. Sent here as raw bytes, as a WebSocket client sends them.
 */
const served = useListeningEmulator({ wires: ['responses'] });
const { emulator } = served;

/** One raw HTTP/1.1 exchange on a fresh socket: the status line and the headers and body that came back. */
function rawRequest(url: string, lines: string[]): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
    let bytes = Buffer.alloc(0);
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      bytes = Buffer.concat([bytes, chunk]);
      text = bytes.toString('utf8');
      const end = bytes.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text)?.[1];
      const whole = length === undefined ? text.endsWith('\r\n0\r\n\r\n') : bytes.length >= end + 4 + Number(length);
      if (end >= 0 && whole) socket.end();
    });
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer; got ${JSON.stringify(text)}`)));
  });
}

const handshake = (host: string, path = '/v1/responses') => [
  `GET ${path} HTTP/1.1`,
  `Host: ${host}`,
  'Connection: Upgrade',
  'Upgrade: websocket',
  'Sec-WebSocket-Version: 13',
  'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
  'Authorization: Bearer sk-test-never-logged',
  'OpenAI-Beta: responses_websockets=2026-02-04',
];

const carriers = {
  native: (log: (entry: ProxyLogEntry) => void) =>
    serveProxy({ upstream: served.url, log }, { host: '127.0.0.1', port: 0 }),
  handler: (log: (entry: ProxyLogEntry) => void) =>
    serveHandler(createProxyHandler({ upstream: served.url, log }), { host: '127.0.0.1', port: 0 }),
};

describe('the proxy refuses the Responses WebSocket with 426, so Codex falls back to HTTP at once', () => {
  for (const [name, start] of Object.entries(carriers)) {
    test(`${name} carrier: the upgrade gets 426 in OpenAI's error shape, the upstream never sees it, and POST still works`, async () => {
      const logs: ProxyLogEntry[] = [];
      const proxy = await start((entry) => logs.push(entry));
      try {
        const before = emulator.requests.length;
        const host = new URL(proxy.url).host;
        const answer = await rawRequest(proxy.url, handshake(host));
        assert.match(answer, /^HTTP\/1\.1 426 /);
        assert.doesNotMatch(answer, /^HTTP\/1\.1 101/m, 'no switch of protocols');
        const rest = answer.slice(answer.indexOf('\r\n\r\n') + 4);
        const json = /^[0-9a-f]+\r\n/.test(rest)
          ? rest.slice(rest.indexOf('\r\n') + 2, rest.lastIndexOf('}') + 1)
          : rest;
        const body = JSON.parse(json) as { error: Record<string, unknown> };
        assert.equal(body.error['code'], 'websocket_not_supported');
        assert.equal(body.error['type'], 'invalid_request_error');
        // Under a base path too (Codex's base_url may end in /v1, a gateway's in /openai/v1).
        assert.match(await rawRequest(proxy.url, handshake(host, '/openai/v1/responses')), /^HTTP\/1\.1 426 /);
        assert.equal(emulator.requests.length, before, 'nothing reached the upstream');
        assert.equal(logs[0]?.status, 426);
        assert.ok(!JSON.stringify(logs).includes('sk-test-never-logged'));
        // The fallback: the same path by POST is the Responses wire as before.
        emulator.push({ text: 'over HTTP' });
        const posted = await fetch(`${proxy.url}/v1/responses`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
          body: JSON.stringify({ model: 'gpt-5-codex', input: 'hi' }),
        });
        assert.equal(posted.status, 200);
        // Other GETs under the path (retrieving a stored response) are carried on as before.
        const retrieve = await fetch(`${proxy.url}/v1/responses/resp_1`, {
          headers: { authorization: 'Bearer sk-test' },
        });
        assert.notEqual(retrieve.status, 426);
      } finally {
        await proxy.close();
      }
    });
  }

  test('the emulator refuses the handshake the same way (it speaks HTTP only), so a run straight at it falls back at once too', async () => {
    const before = emulator.requests.length;
    const answer = await rawRequest(served.url, handshake(new URL(served.url).host));
    assert.match(answer, /^HTTP\/1\.1 426 /);
    assert.equal(emulator.requests.length, before);
    // A plain GET there is still the 405 it was.
    assert.equal((await fetch(`${served.url}/v1/responses`)).status, 405);
  });
});
