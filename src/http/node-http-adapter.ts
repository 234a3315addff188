import { once } from 'node:events';
import type { IncomingMessage, RequestOptions, ServerResponse } from 'node:http';
import { Agent, createServer, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { pipeline, Readable } from 'node:stream';
import { createHostCheck } from './allowed-host.js';
import type { ProxyCoreCarrier, ProxyRequest } from './create-proxy-handler.js';
import { PROXY_CORE } from './create-proxy-handler.js';
import {
  badRequest,
  createUpstreamPool,
  cutResponse,
  decoderFor,
  isStaleSocketError,
  relayNative,
  writeAnswer,
} from './native-relay.js';
import { openAIError, toResponse } from './openai-error-response.js';

/*
 * The node:http adapter of `unstuck/http`, both ways (with native-relay.ts, the only files of it
 * that touch node:http): `serveProxy` carries a handler on a node:http server; `createNodeFetch`
 * is a fetch for the upstream side, several times cheaper per request than Node 20's undici
 * fetch (see docs/decisions/http-node-fetch.md).
 */

export interface ServeOptions {
  /** Default 8787; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1: a proxy holding API keys is not for the network unless asked. */
  host?: string;
  /** `Host` names served besides loopback names and the bound address (others get a 421; see allowed-host.ts). */
  allowHosts?: readonly string[];
  /** A client must have sent its whole request (headers and body) within this (default 60 s; 0 = no limit). */
  requestTimeoutMs?: number;
  /** A client must have sent its request headers within this (default 10 s). */
  headersTimeoutMs?: number;
  /** Connections held at once; more are refused at accept (default 512). */
  maxConnections?: number;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_CONNECTIONS = 512;

export interface ServingProxy {
  url: string;
  /** True when the handler is served natively (see `serveProxy`). */
  native: boolean;
  /** Requests received whose answer has not ended yet. */
  readonly inFlight: number;
  /** Closes every connection at once (`shutdown` with no drain). */
  close(): Promise<void>;
  /**
   * Stops accepting connections and closes idle ones at once; requests in flight may finish for up
   * to `drainMs`, then every connection is closed. Resolves with how many requests were cut.
   */
  shutdown(options: { drainMs: number }): Promise<{ cut: number }>;
}

/**
 * Serves a handler on node:http.
 *
 * A handler from `createProxyHandler` whose upstream fetch is a `createNodeFetch()` (how the CLI
 * composes it) is served natively: the same proxy core decides everything, node:http carries the
 * client side and an undici pool the upstream side (native-relay.ts, docs/decisions/
 * http-native-server.md and http-upstream-undici.md). Any other handler gets the generic
 * adapter: an IncomingMessage becomes the fields of a `Request` (a `ProxyRequest`, its body
 * streaming), and the `Response` is written back chunk by chunk, waiting for `drain` so a slow
 * client holds back the upstream instead of filling memory.
 */
export async function serveProxy(
  handler: ((request: ProxyRequest) => Promise<Response>) & ProxyCoreCarrier,
  options: ServeOptions = {},
): Promise<ServingProxy> {
  const host = options.host ?? '127.0.0.1';
  const carried = handler[PROXY_CORE];
  const ours = (carried?.fetch as NodeFetchCarrier | undefined)?.[NODE_FETCH] === true;
  const native =
    carried !== undefined && ours ? { core: carried.core, pool: createUpstreamPool(carried.core) } : undefined;
  const hostAllowed = createHostCheck({
    bound: host,
    ...(options.allowHosts === undefined ? {} : { allowHosts: options.allowHosts }),
  });
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  // A slow client is bounded twice: its headers within `headersTimeout`, its whole request within
  // `requestTimeout` (Node checks both every `connectionsCheckingInterval`, 30 s by default).
  const server = createServer({
    noDelay: true,
    requestTimeout,
    headersTimeout: Math.min(
      options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
      requestTimeout === 0 ? Infinity : requestTimeout,
    ),
    connectionsCheckingInterval: 1000,
  });
  server.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  let inFlight = 0;
  let draining = false;
  let stopping: Promise<{ cut: number }> | undefined;
  let drained: (() => void) | undefined;
  server.on('request', (incoming: IncomingMessage, outgoing: ServerResponse) => {
    inFlight += 1;
    outgoing.once('close', () => {
      inFlight -= 1;
      if (inFlight === 0) drained?.();
    });
    outgoing.once('finish', () => lingerAfterEarlyAnswer(incoming));
    if (draining) outgoing.shouldKeepAlive = false; // the answer goes out, the connection closes after it
    if (!hostAllowed(incoming.headers.host)) {
      incoming.resume();
      writeAnswer(
        outgoing,
        openAIError(
          421,
          'unstuck proxy: this Host is not served here (loopback names, the bound address and --allow-host only)',
          'host_not_allowed',
        ),
      );
      return;
    }
    try {
      if (native !== undefined) relayNative(native.core, native.pool, incoming, outgoing, origin);
      else relay(handler, incoming, outgoing, origin).catch((error: unknown) => failRelay(outgoing, error));
    } catch (error) {
      failRelay(outgoing, error);
    }
  });
  server.listen(options.port ?? 8787, host);
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  const origin = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  return {
    url: origin,
    native: native !== undefined,
    get inFlight() {
      return inFlight;
    },
    async close() {
      await shutdown({ drainMs: 0 });
    },
    shutdown,
  };

  function shutdown(closeOptions: { drainMs: number }): Promise<{ cut: number }> {
    stopping ??= stop(closeOptions.drainMs);
    return stopping;
  }

  async function stop(drainMs: number): Promise<{ cut: number }> {
    const closed = once(server, 'close');
    draining = true;
    server.close(); // no new connections; idle kept-alive ones close now
    server.closeIdleConnections();
    if (drainMs > 0 && inFlight > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        drained = resolve;
        timer = setTimeout(resolve, drainMs);
      });
      clearTimeout(timer);
    }
    const cut = inFlight;
    server.closeAllConnections();
    await closed;
    await native?.pool.destroy();
    return { cut };
  }
}

/** How long the rest of a request's body is read and dropped after its answer went out early (a 413, a 421). */
const LINGER_MS = 5000;

/**
 * An answer sent before its request's body was all read (a 413 for a body over the limit): the
 * rest is read and dropped, so the client, still sending, reads the answer instead of losing it
 * to a reset (closing a socket with unread input resets it, and a reset discards what the
 * client had not read yet). A body that goes on past `LINGER_MS` has its connection closed.
 */
function lingerAfterEarlyAnswer(incoming: IncomingMessage): void {
  if (incoming.complete || incoming.destroyed) return;
  incoming.resume();
  const timer = setTimeout(() => incoming.socket?.destroy(), LINGER_MS);
  timer.unref();
  incoming.once('end', () => clearTimeout(timer));
  incoming.once('close', () => clearTimeout(timer));
}

/** An error that escaped a carrier for one request: that request fails (a 502 if nothing was sent yet, else a cut answer). */
function failRelay(outgoing: ServerResponse, error: unknown): void {
  if (!outgoing.headersSent) {
    writeAnswer(
      outgoing,
      openAIError(
        502,
        `unstuck proxy: internal error (${error instanceof Error ? error.message : String(error)})`,
        'internal_error',
      ),
    );
    return;
  }
  cutResponse(outgoing);
}

async function relay(
  handler: (request: ProxyRequest) => Promise<Response>,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  origin: string,
): Promise<void> {
  const controller = new AbortController();
  outgoing.once('close', () => {
    if (!outgoing.writableFinished) controller.abort();
  });

  let response: Response;
  try {
    response = await handler(toRequest(incoming, origin, controller.signal));
  } catch (error) {
    // The handler answers every failure itself; this is a request node:http accepted but fetch cannot represent.
    response = toResponse(badRequest(error));
  }
  if (outgoing.destroyed) {
    await response.body?.cancel().catch(() => undefined);
    return;
  }

  const headers: [string, string][] = [];
  for (const [name, value] of response.headers) if (name !== 'set-cookie') headers.push([name, value]);
  for (const cookie of response.headers.getSetCookie()) headers.push(['set-cookie', cookie]);
  const writeHead = (): void => {
    outgoing.writeHead(response.status, response.statusText === '' ? undefined : response.statusText, headers.flat());
  };
  if (response.body === null) {
    writeHead();
    outgoing.end();
    return;
  }
  const reader = response.body.getReader();
  // An SSE client sees the status at once, before the first event. Other bodies carry the headers
  // in their first write: a body that fails before its first byte (a compressed body that does not
  // decode) is then answered as a failed upstream, not as a 200 cut short.
  let first: Awaited<ReturnType<typeof reader.read>> | undefined;
  if (response.headers.get('content-type')?.startsWith('text/event-stream') === true) {
    writeHead();
    outgoing.flushHeaders();
  } else {
    try {
      first = await reader.read();
    } catch (error) {
      writeAnswer(
        outgoing,
        openAIError(
          502,
          `unstuck proxy: the upstream answer failed before its body (${error instanceof Error ? error.message : String(error)})`,
          'upstream_unreachable',
        ),
      );
      return;
    }
    if (outgoing.destroyed) {
      await reader.cancel().catch(() => undefined);
      return;
    }
    writeHead();
  }

  // Writes are corked until the next turn of the event loop, so a body that ends right after its
  // last chunk leaves in one syscall with its terminator; a stream's chunks are still sent at once.
  let corked = false;
  const uncork = (): void => {
    corked = false;
    outgoing.uncork();
  };
  try {
    for (;;) {
      const { done, value } = first ?? (await reader.read());
      first = undefined;
      if (done) break;
      if (outgoing.destroyed) throw new Error('client closed the connection');
      if (!corked) {
        corked = true;
        outgoing.cork();
        setImmediate(uncork);
      }
      if (!outgoing.write(value)) await drained(outgoing);
    }
    outgoing.end();
  } catch {
    // Upstream failed mid-body, or the client left: close the connection without the final chunk.
    await reader.cancel().catch(() => undefined);
    cutResponse(outgoing);
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

/** The fields of a `Request` the handler reads, without paying for a `Request` (see `ProxyRequest`). */
function toRequest(incoming: IncomingMessage, origin: string, signal: AbortSignal): ProxyRequest {
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2)
    headers.append(raw[index] as string, raw[index + 1] as string);
  const method = incoming.method ?? 'GET';
  // The URL is built on our own origin: the Host header is the client's to choose and is not trusted for routing.
  const url = `${origin}${incoming.url ?? '/'}`;
  new URL(url); // throws on a request target fetch could not represent, as `new Request` would
  return { method, url, headers, signal, body: method === 'GET' || method === 'HEAD' ? null : readableOf(incoming) };
}

/**
 * A node message body as a web stream that reads only when asked. Cancelling it (the handler
 * refused an oversized body) discards the rest instead of destroying the socket, so a 413 still
 * reaches the client. A message cut off before its end (a reset) errors the stream.
 */
function readableOf(incoming: IncomingMessage): ReadableStream<Uint8Array> {
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
      const fail = (error: Error): void => {
        if (open) controller.error(error);
        open = false;
      };
      incoming.once('error', fail);
      incoming.once('close', () => {
        if (!incoming.complete) fail(new Error('the connection closed before the end of the body'));
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

/**
 * A `fetch` over node:http/https with keep-alive pools, for the proxy's upstream side. What the
 * proxy needs of fetch and no more: string/bytes bodies, `signal`, redirects returned as they are
 * (like `redirect: 'manual'`), the body streamed with backpressure. It asks the upstream for an
 * uncompressed body (`accept-encoding: identity`), since it does not decode one. Connection
 * failures reject with a `TypeError('fetch failed', { cause })` as fetch does.
 */
export function createNodeFetch(options: { maxSockets?: number } = {}): typeof fetch {
  const maxSockets = options.maxSockets ?? 256;
  const agents = {
    'http:': new Agent({ keepAlive: true, maxSockets }),
    'https:': new HttpsAgent({ keepAlive: true, maxSockets }),
  };

  const nodeFetch = async function nodeFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const request = typeof input === 'object' && !(input instanceof URL) ? input : undefined;
    const url = new URL(request?.url ?? String(input));
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new TypeError(`fetch failed: unsupported protocol ${url.protocol}`);
    const method = init?.method ?? request?.method ?? 'GET';
    const headers: Record<string, string> = {};
    new Headers(init?.headers ?? request?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    headers['accept-encoding'] = 'identity';
    const body = await bodyBytes(
      init?.body ?? (request !== undefined && request.body !== null ? await request.arrayBuffer() : undefined),
    );
    if (body !== undefined) headers['content-length'] = String(body.byteLength);
    const signal = init?.signal ?? request?.signal ?? undefined;
    signal?.throwIfAborted();

    const requestOptions: RequestOptions = {
      host: url.hostname,
      port: url.port,
      path: `${url.pathname}${url.search}`,
      method,
      headers,
      agent: agents[url.protocol as 'http:' | 'https:'],
    };
    const send = (): Promise<Response> =>
      new Promise<Response>((resolve, reject) => {
        const outgoing = (url.protocol === 'https:' ? httpsRequest : httpRequest)(requestOptions, (incoming) => {
          signal?.removeEventListener('abort', onAbortBeforeResponse);
          signal?.addEventListener('abort', () => incoming.destroy(signal.reason as Error), { once: true });
          const responseHeaders = new Headers();
          for (let index = 0; index + 1 < incoming.rawHeaders.length; index += 2)
            responseHeaders.append(incoming.rawHeaders[index] as string, incoming.rawHeaders[index + 1] as string);
          const status = incoming.statusCode ?? 502;
          const init = { status, statusText: incoming.statusMessage ?? '', headers: responseHeaders };
          if (status < 200 || status > 599) {
            // A status a fetch `Response` cannot carry (101, 600–999): a failed fetch, as undici's fetch makes of it.
            incoming.destroy();
            reject(new TypeError('fetch failed', { cause: new Error(`the upstream answered with status ${status}`) }));
            return;
          }
          if (status === 204 || status === 205 || status === 304 || method === 'HEAD') {
            incoming.resume();
            resolve(new Response(null, init));
            return;
          }
          resolve(new Response(decodedBody(incoming, responseHeaders), init));
        });
        const onAbortBeforeResponse = (): void => {
          outgoing.destroy();
          reject(signal?.reason);
        };
        signal?.addEventListener('abort', onAbortBeforeResponse, { once: true });
        outgoing.once('error', (error: NodeJS.ErrnoException) => {
          signal?.removeEventListener('abort', onAbortBeforeResponse);
          if (signal?.aborted === true) reject(signal.reason);
          else
            reject(
              Object.assign(new TypeError('fetch failed', { cause: error }), {
                [STALE]: outgoing.reusedSocket && isStaleSocketError(error),
              }),
            );
        });
        outgoing.end(body);
      });
    try {
      return await send();
    } catch (error) {
      // A kept-alive socket the upstream closed just as we reused it: the request never reached
      // it, so it is sent once more on a fresh socket (the retry Node's http docs recommend).
      if ((error as Record<symbol, unknown>)[STALE] !== true) throw error;
      return await send();
    }
  };
  // serveProxy finds this mark, to serve a handler over this fetch natively (on its own upstream pool).
  return Object.assign(nodeFetch, { [NODE_FETCH]: true }) as typeof fetch;
}

const STALE = Symbol('stale keep-alive socket');
const NODE_FETCH = Symbol('unstuck node fetch');
interface NodeFetchCarrier {
  [NODE_FETCH]?: boolean;
}

async function bodyBytes(body: RequestInit['body'] | ArrayBuffer | undefined): Promise<Uint8Array | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  return new Uint8Array(await new Response(body).arrayBuffer());
}

/**
 * The body as sent, or decoded when the upstream compressed it although we asked for identity
 * (fetch decodes too, and the proxy drops `content-encoding` for that reason).
 */
function decodedBody(incoming: IncomingMessage, headers: Headers): ReadableStream<Uint8Array> {
  const decoder = decoderFor(headers.get('content-encoding') ?? undefined);
  if (decoder === undefined) return readableOf(incoming);
  headers.delete('content-encoding');
  headers.delete('content-length');
  pipeline(incoming, decoder, () => undefined); // an error on either side destroys the other
  return Readable.toWeb(decoder) as ReadableStream<Uint8Array>;
}
