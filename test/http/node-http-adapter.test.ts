import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { test } from 'node:test';
import { readLimitedBody } from '../../src/http/read-limited-body.js';
import { serveProxy } from '../../src/http/serve-proxy.js';

test('binds 127.0.0.1 by default and carries method, path, query, headers and body both ways', async (t) => {
  const server = await serveProxy(async (request) => {
    const body = await request.text();
    const headers = new Headers([['content-type', 'application/json'], ['set-cookie', 'a=1'], ['set-cookie', 'b=2']]);
    return new Response(JSON.stringify({ method: request.method, url: request.url, auth: request.headers.get('authorization'), body }), { status: 201, headers });
  }, { port: 0 });
  t.after(() => server.close());
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const response = await fetch(`${server.url}/v1/x?y=1`, { method: 'POST', headers: { authorization: 'Bearer k' }, body: 'hello' });
  assert.equal(response.status, 201);
  assert.deepEqual(response.headers.getSetCookie(), ['a=1', 'b=2']);
  const echoed = (await response.json()) as Record<string, string>;
  assert.equal(echoed.method, 'POST');
  assert.equal(new URL(echoed.url ?? '').pathname + new URL(echoed.url ?? '').search, '/v1/x?y=1');
  assert.equal(echoed.auth, 'Bearer k');
  assert.equal(echoed.body, 'hello');
});

test('a streamed response reaches the client chunk by chunk, not at the end', async (t) => {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const server = await serveProxy(async () => {
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(encoder.encode('data: first\n\n'));
        await gate;
        controller.enqueue(encoder.encode('data: second\n\n'));
        controller.close();
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  }, { port: 0 });
  t.after(() => server.close());
  const response = await fetch(`${server.url}/stream`);
  const reader = response.body!.getReader();
  const first = await reader.read();
  assert.equal(new TextDecoder().decode(first.value), 'data: first\n\n'); // arrived while the handler was still holding the second
  release();
  let rest = '';
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
  assert.equal(rest, 'data: second\n\n');
});

test('a response body that fails midway ends the connection with an error, never a clean end', async (t) => {
  const server = await serveProxy(async () => {
    let sent = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) controller.error(new Error('upstream reset'));
        else controller.enqueue(new TextEncoder().encode('data: partial\n\n'));
        sent = true;
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  }, { port: 0 });
  t.after(() => server.close());
  const response = await fetch(`${server.url}/stream`);
  await assert.rejects(response.text());
});

test('a client that leaves cancels the response body, so the upstream read stops', async (t) => {
  let cancelled: () => void = () => undefined;
  const wasCancelled = new Promise<void>((resolve) => (cancelled = resolve));
  const server = await serveProxy(async () => {
    const body = new ReadableStream<Uint8Array>({
      pull: (controller) => new Promise((resolve) => setTimeout(() => resolve(controller.enqueue(new Uint8Array(1024))), 5)),
      cancel: () => cancelled(),
    });
    return new Response(body);
  }, { port: 0 });
  t.after(() => server.close());
  const controller = new AbortController();
  const response = await fetch(`${server.url}/forever`, { signal: controller.signal });
  const reader = response.body!.getReader();
  await reader.read();
  controller.abort();
  await wasCancelled;
});

test('a handler that refuses a large body still gets its 413 to the client', async (t) => {
  const server = await serveProxy(async (request) => {
    const read = await readLimitedBody(request.body, 1024);
    return read.ok ? new Response('fine') : new Response('too large', { status: 413, headers: { connection: 'close' } });
  }, { port: 0 });
  t.after(() => server.close());
  const url = new URL(server.url);
  const status = await new Promise<number>((resolve, reject) => {
    const request = httpRequest({ host: url.hostname, port: url.port, method: 'POST', path: '/big', headers: { 'transfer-encoding': 'chunked' } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
    for (let index = 0; index < 64; index += 1) request.write(Buffer.alloc(16 * 1024, 97));
    request.end();
  });
  assert.equal(status, 413);
});
