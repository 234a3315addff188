import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ServeOptions {
  /** Default 8787; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1: a proxy holding API keys is not for the network unless asked. */
  host?: string;
}

export interface ServingProxy {
  url: string;
  close(): Promise<void>;
}

/**
 * The node:http adapter around a fetch-style handler (the only file of `unstuck/http` that
 * touches node:http). It turns an IncomingMessage into a `Request` whose body streams, and
 * writes the `Response` back chunk by chunk, waiting for `drain` so a slow client holds back
 * the upstream instead of filling memory.
 */
export async function serveProxy(handler: (request: Request) => Promise<Response>, options: ServeOptions = {}): Promise<ServingProxy> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer({ noDelay: true }, (incoming, outgoing) => {
    void relay(handler, incoming, outgoing, origin);
  });
  server.listen(options.port ?? 8787, host);
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  const origin = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  return {
    url: origin,
    async close() {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}

async function relay(handler: (request: Request) => Promise<Response>, incoming: IncomingMessage, outgoing: ServerResponse, origin: string): Promise<void> {
  const controller = new AbortController();
  outgoing.once('close', () => {
    if (!outgoing.writableFinished) controller.abort();
  });

  let response: Response;
  try {
    response = await handler(toRequest(incoming, origin, controller.signal));
  } catch (error) {
    // The handler answers every failure itself; this is a request node:http accepted but fetch cannot represent.
    const message = error instanceof Error ? error.message : String(error);
    response = Response.json({ error: { message: `unstuck proxy: bad request (${message})`, type: 'invalid_request_error', param: null, code: 'bad_request' } }, { status: 400 });
  }
  if (outgoing.destroyed) {
    await response.body?.cancel().catch(() => undefined);
    return;
  }

  const headers: [string, string][] = [];
  for (const [name, value] of response.headers) if (name !== 'set-cookie') headers.push([name, value]);
  for (const cookie of response.headers.getSetCookie()) headers.push(['set-cookie', cookie]);
  outgoing.writeHead(response.status, response.statusText === '' ? undefined : response.statusText, headers.flat());
  if (response.body === null) {
    outgoing.end();
    return;
  }
  outgoing.flushHeaders(); // an SSE client sees the status at once, before the first event

  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (outgoing.destroyed) throw new Error('client closed the connection');
      if (!outgoing.write(value)) await drained(outgoing);
    }
    outgoing.end();
  } catch {
    // Upstream failed mid-body, or the client left: close the connection without the final chunk,
    // so the client sees a truncated response as an error, never as a complete one. `end` on the
    // socket flushes what was already written first (destroy would drop it); a client that does
    // not read it in time is cut off.
    await reader.cancel().catch(() => undefined);
    const socket = outgoing.socket;
    if (socket === null || outgoing.destroyed) {
      outgoing.destroy();
      return;
    }
    socket.end();
    setTimeout(() => socket.destroy(), 5000).unref();
  }
}

/** Resolves on `drain`, or on `close` (a client that left never drains); leaves no listener behind. */
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

function toRequest(incoming: IncomingMessage, origin: string, signal: AbortSignal): Request {
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) headers.append(raw[index] as string, raw[index + 1] as string);
  const method = incoming.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  // The URL is built on our own origin: the Host header is the client's to choose and is not trusted for routing.
  return new Request(`${origin}${incoming.url ?? '/'}`, {
    method,
    headers,
    signal,
    ...(hasBody ? { body: bodyOf(incoming), duplex: 'half' } : {}),
  } as RequestInit);
}

/**
 * The request body as a web stream that reads only when asked. Cancelling it (the handler
 * refused an oversized body) discards the rest instead of destroying the socket, so the 413
 * still reaches the client.
 */
function bodyOf(incoming: IncomingMessage): ReadableStream<Uint8Array> {
  let open = true;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      incoming.pause();
      incoming.on('data', (chunk: Buffer) => {
        if (!open) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) incoming.pause();
      });
      incoming.once('end', () => {
        if (open) controller.close();
        open = false;
      });
      incoming.once('error', (error) => {
        if (open) controller.error(error);
        open = false;
      });
    },
    pull() {
      incoming.resume();
    },
    cancel() {
      open = false;
      incoming.resume();
    },
  });
}
