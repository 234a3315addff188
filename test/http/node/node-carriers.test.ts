import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { test } from 'node:test';
import { createNodeFetch } from '../../../src/http/node/create-node-fetch.js';
import { serveHandler } from '../../../src/http/node/serve-handler.js';
import { serveProxy } from '../../../src/http/node/serve-proxy.js';
import { readLimitedBody } from '../../../src/http/read-limited-body.js';

test('binds 127.0.0.1 by default and carries method, path, query, headers and body both ways', async (t) => {
  const server = await serveHandler(
    async (request) => {
      const body = await new Response(request.body).text();
      const headers = new Headers([
        ['content-type', 'application/json'],
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
      ]);
      return new Response(
        JSON.stringify({ method: request.method, url: request.url, auth: request.headers.get('authorization'), body }),
        { status: 201, headers },
      );
    },
    { port: 0 },
  );
  t.after(() => server.close());
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const response = await fetch(`${server.url}/v1/x?y=1`, {
    method: 'POST',
    headers: { authorization: 'Bearer k' },
    body: 'hello',
  });
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
  const server = await serveHandler(
    async () => {
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
    },
    { port: 0 },
  );
  t.after(() => server.close());
  const response = await fetch(`${server.url}/stream`);
  const reader = response.body!.getReader();
  const first = await reader.read();
  assert.equal(new TextDecoder().decode(first.value), 'data: first\n\n'); // arrived while the handler was still holding the second
  release();
  let rest = '';
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
    rest += new TextDecoder().decode(chunk.value);
  assert.equal(rest, 'data: second\n\n');
});

test('a response body that fails midway ends the connection with an error, never a clean end', async (t) => {
  const server = await serveHandler(
    async () => {
      let sent = false;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent) controller.error(new Error('upstream reset'));
          else controller.enqueue(new TextEncoder().encode('data: partial\n\n'));
          sent = true;
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    },
    { port: 0 },
  );
  t.after(() => server.close());
  const response = await fetch(`${server.url}/stream`);
  await assert.rejects(response.text());
  // Over a raw socket: what was written before the failure arrives, then the message ends incomplete.
  const url = new URL(server.url);
  const { received, complete } = await new Promise<{ received: string; complete: boolean }>((resolve) => {
    httpRequest({ host: url.hostname, port: url.port, path: '/stream' }, (message) => {
      let received = '';
      message.setEncoding('utf8');
      message.on('data', (chunk: string) => (received += chunk));
      message.on('error', () => undefined);
      message.on('close', () => resolve({ received, complete: message.complete }));
    }).end();
  });
  assert.equal(received, 'data: partial\n\n');
  assert.equal(complete, false);
});

test('a client that leaves cancels the response body, so the upstream read stops', async (t) => {
  let cancelled: () => void = () => undefined;
  const wasCancelled = new Promise<void>((resolve) => (cancelled = resolve));
  const server = await serveHandler(
    async () => {
      let open = true;
      const body = new ReadableStream<Uint8Array>({
        pull: (controller) =>
          new Promise((resolve) =>
            setTimeout(() => resolve(open ? controller.enqueue(new Uint8Array(1024)) : undefined), 5),
          ),
        cancel: () => {
          open = false;
          cancelled();
        },
      });
      return new Response(body);
    },
    { port: 0 },
  );
  t.after(() => server.close());
  const controller = new AbortController();
  const response = await fetch(`${server.url}/forever`, { signal: controller.signal });
  const reader = response.body!.getReader();
  await reader.read();
  controller.abort();
  await wasCancelled;
});

test('a handler that refuses a large body still gets its 413 to the client', async (t) => {
  const server = await serveHandler(
    async (request) => {
      const read = await readLimitedBody(request.body, 1024);
      return read.ok
        ? new Response('fine')
        : new Response('too large', { status: 413, headers: { connection: 'close' } });
    },
    { port: 0 },
  );
  t.after(() => server.close());
  const url = new URL(server.url);
  const status = await new Promise<number>((resolve, reject) => {
    const request = httpRequest(
      { host: url.hostname, port: url.port, method: 'POST', path: '/big', headers: { 'transfer-encoding': 'chunked' } },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.on('error', reject);
    for (let index = 0; index < 64; index += 1) request.write(Buffer.alloc(16 * 1024, 97));
    request.end();
  });
  assert.equal(status, 413);
});

// --- createNodeFetch: the upstream side --------------------------------------------------------

test('createNodeFetch sends method, path, headers and body, and asks for an uncompressed answer', async (t) => {
  const server = await serveHandler(
    async (request) =>
      Response.json(
        {
          method: request.method,
          path: new URL(request.url).pathname,
          auth: request.headers.get('authorization'),
          encoding: request.headers.get('accept-encoding'),
          body: await new Response(request.body).text(),
        },
        { status: 201, headers: { 'x-upstream': 'yes' } },
      ),
    { port: 0 },
  );
  t.after(() => server.close());
  const nodeFetch = createNodeFetch();
  const response = await nodeFetch(`${server.url}/v1/chat/completions?x=1`, {
    method: 'POST',
    headers: { authorization: 'Bearer k', 'accept-encoding': 'gzip, br' },
    body: new TextEncoder().encode('{"a":1}'),
  });
  assert.equal(response.status, 201);
  assert.equal(response.headers.get('x-upstream'), 'yes');
  assert.deepEqual(await response.json(), {
    method: 'POST',
    path: '/v1/chat/completions',
    auth: 'Bearer k',
    encoding: 'identity',
    body: '{"a":1}',
  });
});

test('createNodeFetch: a refused connection rejects like fetch (TypeError with the cause code)', async () => {
  const closed = await serveHandler(async () => new Response(''), { port: 0 });
  await closed.close();
  await assert.rejects(
    createNodeFetch()(`${closed.url}/x`),
    (error: unknown) => error instanceof TypeError && (error.cause as { code?: string }).code === 'ECONNREFUSED',
  );
});

test('createNodeFetch: an abort before the answer rejects with the reason; after it, the body errors', async (t) => {
  let release: () => void = () => undefined;
  const server = await serveHandler(
    async (request) => {
      if (new URL(request.url).pathname === '/slow') await new Promise<void>((resolve) => (release = resolve));
      let cancelled = false;
      return new Response(
        new ReadableStream({
          pull: (controller) =>
            new Promise((resolve) =>
              setTimeout(() => resolve(cancelled ? undefined : controller.enqueue(new Uint8Array(8))), 10),
            ),
          cancel: () => {
            cancelled = true;
          },
        }),
      );
    },
    { port: 0 },
  );
  t.after(() => {
    release();
    return server.close();
  });
  const nodeFetch = createNodeFetch();
  const early = new AbortController();
  const pending = nodeFetch(`${server.url}/slow`, { signal: early.signal });
  setTimeout(() => early.abort(new Error('gave up')), 20);
  await assert.rejects(pending, /gave up/);
  const late = new AbortController();
  const response = await nodeFetch(`${server.url}/stream`, { signal: late.signal });
  const reader = response.body!.getReader();
  await reader.read();
  late.abort(new Error('client left'));
  await assert.rejects(async () => {
    for (;;) if ((await reader.read()).done) break;
  });
});

test('createNodeFetch: a response cut off mid-body errors the body stream; a 204 has no body', async (t) => {
  const server = await serveHandler(
    async (request) => {
      if (new URL(request.url).pathname === '/empty') return new Response(null, { status: 204 });
      let sent = 0;
      return new Response(
        new ReadableStream({
          pull: (controller) =>
            sent++ < 2 ? controller.enqueue(new Uint8Array(4)) : controller.error(new Error('reset')),
        }),
      );
    },
    { port: 0 },
  );
  t.after(() => server.close());
  const nodeFetch = createNodeFetch();
  const empty = await nodeFetch(`${server.url}/empty`);
  assert.equal(empty.status, 204);
  assert.equal(empty.body, null);
  const cut = await nodeFetch(`${server.url}/cut`);
  await assert.rejects(cut.arrayBuffer());
});

test('createNodeFetch decodes a gzip body an upstream sent although identity was asked for', async (t) => {
  const { createServer } = await import('node:http');
  const { gzipSync } = await import('node:zlib');
  const server = createServer((_incoming, outgoing) => {
    outgoing.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    outgoing.end(gzipSync('{"compressed":true}'));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as { port: number };
  const response = await createNodeFetch()(`http://127.0.0.1:${port}/`);
  assert.equal(response.headers.get('content-encoding'), null);
  assert.deepEqual(await response.json(), { compressed: true });
});

/**
 * An upstream that closes a kept-alive socket as its second request arrives (the race a reused
 * socket meets), and with `refuseFresh` every request. Counts the requests it saw.
 */
async function startSocketClosingUpstream(t: {
  after(fn: () => unknown): void;
}): Promise<{ port: number; seen(): number; refuseFresh(): void }> {
  const { createServer } = await import('node:http');
  let seen = 0;
  let refuseFresh = false;
  const perSocket = new WeakMap<object, number>();
  const server = createServer((incoming, outgoing) => {
    seen += 1;
    const count = (perSocket.get(incoming.socket) ?? 0) + 1;
    perSocket.set(incoming.socket, count);
    if (count > 1 || refuseFresh) {
      incoming.socket.destroy();
      return;
    }
    incoming.resume();
    outgoing.end('ok');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    port: (server.address() as { port: number }).port,
    seen: () => seen,
    refuseFresh: () => (refuseFresh = true),
  };
}

test('createNodeFetch resends once when a kept-alive socket turns out to be closed, never on a fresh one', async (t) => {
  const upstream = await startSocketClosingUpstream(t);
  const url = `http://127.0.0.1:${upstream.port}/`;
  const nodeFetch = createNodeFetch();
  assert.equal(await (await nodeFetch(url, { method: 'POST', body: 'one' })).text(), 'ok');
  assert.equal(await (await nodeFetch(url, { method: 'POST', body: 'two' })).text(), 'ok');
  assert.equal(upstream.seen(), 3); // first, the reused socket that failed, the resend
  upstream.refuseFresh();
  await assert.rejects(createNodeFetch()(url, { method: 'POST', body: 'three' }), TypeError);
  assert.equal(upstream.seen(), 4);
});

test('the native server resends once when a kept-alive upstream socket turns out to be closed, never on a fresh one', async (t) => {
  const upstream = await startSocketClosingUpstream(t);
  const proxy = await serveProxy({ upstream: `http://127.0.0.1:${upstream.port}` }, { port: 0 });
  t.after(() => proxy.close());
  assert.equal(proxy.native, true);
  assert.equal(await (await fetch(`${proxy.url}/v1/files`, { method: 'POST', body: 'one' })).text(), 'ok');
  assert.equal(await (await fetch(`${proxy.url}/v1/files`, { method: 'POST', body: 'two' })).text(), 'ok');
  assert.equal(upstream.seen(), 3); // first, the reused socket that failed, the resend
  upstream.refuseFresh();
  const refused = await fetch(`${proxy.url}/v1/files`, { method: 'POST', body: 'three' });
  assert.equal(refused.status, 502);
  assert.match(((await refused.json()) as { error: { message: string } }).error.message, /unreachable/);
  // 4: sent on a fresh socket, refused, not resent; 5: on the kept-alive one, then one resend on a fresh socket. Never more.
  assert.ok([4, 5].includes(upstream.seen()), `seen ${upstream.seen()}`);
});
