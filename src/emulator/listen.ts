import { once } from 'node:events';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';

/**
 * The node:http adapter: turns each incoming request into a fetch `Request`, hands it to the
 * in-process handler and writes the `Response` back, streaming its body. A body that errors
 * mid-way (the emulator's scripted disconnect) cuts the connection, as a dropped connection would,
 * after the bytes already written have left.
 */
export async function listenOn(
  handle: (request: Request) => Promise<Response>,
  options: { port: number; host: string },
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((incoming, outgoing) => {
    const controller = new AbortController();
    outgoing.on('close', () => {
      if (!outgoing.writableFinished) controller.abort(new Error('client closed the connection'));
    });
    const url = new URL(incoming.url ?? '/', `http://${options.host}`);
    const hasBody = incoming.method !== 'GET' && incoming.method !== 'HEAD';
    const init: RequestInit & { duplex?: 'half' } = {
      method: incoming.method ?? 'GET',
      headers: toHeaders(incoming.headers),
      signal: controller.signal,
    };
    if (hasBody) {
      init.body = Readable.toWeb(incoming) as ReadableStream<Uint8Array>;
      init.duplex = 'half';
    }
    void respond(handle, new Request(url, init), outgoing);
  });
  server.listen(options.port, options.host);
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function respond(
  handle: (request: Request) => Promise<Response>,
  request: Request,
  outgoing: ServerResponse,
): Promise<void> {
  let response: Response;
  try {
    response = await handle(request);
  } catch (error) {
    if (!outgoing.headersSent) {
      outgoing.writeHead(500, { 'content-type': 'application/json' });
      outgoing.end(
        JSON.stringify({
          error: {
            message: `emulator failure: ${(error as Error).message}`,
            type: 'server_error',
            param: null,
            code: null,
          },
        }),
      );
    }
    return;
  }
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  outgoing.writeHead(response.status, headers);
  outgoing.flushHeaders();
  if (response.body === null) {
    outgoing.end();
    return;
  }
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      if (!outgoing.write(chunk)) await drained(outgoing);
      if (outgoing.destroyed) return;
    }
    outgoing.end();
  } catch {
    cut(outgoing);
  }
}

/** Resolves on `drain`, or on `close` (a client that left never drains), and removes both listeners either way. */
function drained(outgoing: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      outgoing.off('drain', done);
      outgoing.off('close', done);
      resolve();
    };
    outgoing.on('drain', done);
    outgoing.on('close', done);
  });
}

/**
 * Drops the connection without the response's final chunk, so the client sees it incomplete. The
 * events written just before are still queued (corked, or in the socket's buffer): `destroy` would
 * throw them away and the client would get nothing, so the socket is ended (what was written leaves
 * first, then FIN) and destroyed only if the client has not closed it a while later.
 */
function cut(outgoing: ServerResponse): void {
  const socket = outgoing.socket;
  if (socket === null || outgoing.destroyed) {
    outgoing.destroy();
    return;
  }
  while (socket.writableCorked > 0) socket.uncork();
  socket.end();
  setTimeout(() => socket.destroy(), 2000).unref();
}

function toHeaders(incoming: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  return headers;
}
