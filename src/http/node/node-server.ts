import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createHostCheck } from '../allowed-host.js';
import { openAIError } from '../openai-error-response.js';
import { failRelay, writeAnswer } from './node-response.js';

/*
 * The node:http server both carriers stand on (serve-proxy.ts, serve-handler.ts): the hardening
 * every request gets whatever carries it — the Host check (a 421), the timeouts of a slow client,
 * the connection bound, the drain on shutdown, the early answer that still reaches a client
 * still sending — and nothing about what the request is.
 */

export interface ServeOptions {
  /** Default 8787; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1: a proxy holding API keys is not for the network unless asked. */
  host?: string;
  /**
   * `Host` names served besides loopback names and the bound address (others get a 421; see
   * allowed-host.ts). `'any'` serves every `Host`: for a server that holds nothing a page could
   * read (the emulator), never for the proxy.
   */
  allowHosts?: readonly string[] | 'any';
  /** A client must have sent its whole request (headers and body) within this (default 60 s; 0 = no limit). */
  requestTimeoutMs?: number;
  /** A client must have sent its request headers within this (default 10 s). */
  headersTimeoutMs?: number;
  /** Connections held at once; more are refused at accept (default 512). */
  maxConnections?: number;
  /**
   * Asked once per connection as it is accepted, before anything of it is read: false closes it
   * (`unstuck run` admits only its agent's processes where the agent cannot be given a token).
   */
  admitConnection?: (socket: Socket) => boolean;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_CONNECTIONS = 512;

export interface ServingProxy {
  url: string;
  /** True when served by `serveProxy` (the native relay), false when by `serveHandler`. */
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

/** What a carrier does with one request that passed the server's checks; it answers on `outgoing`, and may throw. */
export type CarryRequest = (incoming: IncomingMessage, outgoing: ServerResponse, origin: string) => void;

/**
 * Listens with `carry` behind the server's hardening. `release` runs once every connection is
 * closed (the native relay's upstream pool). A throw from `carry` fails that request alone.
 */
export async function listenNode(
  options: ServeOptions,
  carry: CarryRequest,
  release: () => Promise<void> = async () => undefined,
): Promise<Omit<ServingProxy, 'native'>> {
  const host = options.host ?? '127.0.0.1';
  const allowHosts = options.allowHosts;
  const hostAllowed =
    allowHosts === 'any'
      ? () => true
      : createHostCheck({ bound: host, ...(allowHosts === undefined ? {} : { allowHosts }) });
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
  const admit = options.admitConnection;
  // After the server's own listener (it only sets the parser up): nothing of the connection is read yet.
  if (admit !== undefined)
    server.on('connection', (socket: Socket) => {
      let admitted = false;
      try {
        admitted = admit(socket);
      } catch {
        // A check that fails admits nothing.
      }
      if (!admitted) socket.destroy();
    });
  let inFlight = 0;
  let draining = false;
  let stopping: Promise<{ cut: number }> | undefined;
  let drained: (() => void) | undefined;
  server.on('request', (incoming: IncomingMessage, outgoing: ServerResponse) => {
    inFlight += 1;
    // `on`, not `once`: a response emits each of these once, and `once` wraps every listener (per request).
    outgoing.on('close', () => {
      inFlight -= 1;
      if (inFlight === 0) drained?.();
    });
    outgoing.on('finish', () => lingerAfterEarlyAnswer(incoming));
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
      carry(incoming, outgoing, origin);
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
    await release();
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
