import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toClientHeaders, toUpstreamHeaders } from '../../src/http/forward-headers.js';

test('end-to-end request headers go through, Authorization included', () => {
  const headers = toUpstreamHeaders(
    new Headers({
      authorization: 'Bearer sk-test',
      'content-type': 'application/json',
      'x-title': 'cline',
      accept: 'text/event-stream',
    }),
  );
  assert.equal(headers.get('authorization'), 'Bearer sk-test');
  assert.equal(headers.get('content-type'), 'application/json');
  assert.equal(headers.get('x-title'), 'cline');
  assert.equal(headers.get('accept'), 'text/event-stream');
});

test('hop-by-hop headers are dropped, and so is every header Connection names (RFC 9110 §7.6.1)', () => {
  const headers = toUpstreamHeaders(
    new Headers({
      connection: 'keep-alive, x-hop',
      'keep-alive': 'timeout=5',
      'proxy-connection': 'keep-alive',
      te: 'trailers',
      trailer: 'x-checksum',
      'transfer-encoding': 'chunked',
      upgrade: 'h2c',
      'proxy-authorization': 'Basic cHJveHk6c2VjcmV0',
      'x-hop': 'only for the next hop',
      'x-kept': 'yes',
    }),
  );
  assert.deepEqual([...headers.keys()], ['x-kept']);
});

test('host, content-length and expect are recomputed for the upstream, not copied', () => {
  const headers = toUpstreamHeaders(
    new Headers({ host: '127.0.0.1:8787', 'content-length': '12', expect: '100-continue', 'x-kept': '1' }),
  );
  assert.equal(headers.get('expect'), null);
  assert.equal(headers.get('host'), null);
  assert.equal(headers.get('content-length'), null);
  assert.equal(headers.get('x-kept'), '1');
});

test('response: a plain body keeps its length', () => {
  const headers = toClientHeaders(new Headers({ 'content-length': '42', 'content-type': 'application/json' }));
  assert.equal(headers.get('content-length'), '42');
});

test('response: encoding and length are dropped (fetch decoded the body), rate-limit headers and cookies kept one by one', () => {
  const upstream = new Headers([
    ['content-encoding', 'gzip'],
    ['content-length', '100'],
    ['transfer-encoding', 'chunked'],
    ['retry-after', '7'],
    ['x-ratelimit-remaining-requests', '0'],
    ['set-cookie', 'a=1; Path=/'],
    ['set-cookie', 'b=2; Path=/'],
  ]);
  const headers = toClientHeaders(upstream);
  assert.equal(headers.get('content-encoding'), null);
  assert.equal(headers.get('content-length'), null);
  assert.equal(headers.get('transfer-encoding'), null);
  assert.equal(headers.get('retry-after'), '7');
  assert.equal(headers.get('x-ratelimit-remaining-requests'), '0');
  assert.deepEqual(headers.getSetCookie(), ['a=1; Path=/', 'b=2; Path=/']);
});
