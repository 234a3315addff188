import { Pool } from 'undici';
import type { ProxyCore } from '../create-proxy-core.js';
import { createGuardedConnector } from './guarded-connector.js';

/** The upstream pool for a proxy core: keep-alive connections, no timeouts of its own (the relay's silence timer is the one). */
export function createUpstreamPool(core: ProxyCore): Pool {
  const { protocol, hostname, port } = core.upstream;
  const host = hostname.includes(':') && !hostname.startsWith('[') ? `[${hostname}]` : hostname;
  return new Pool(`${protocol}//${host}${port === '' ? '' : `:${port}`}`, {
    connections: 256,
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: createGuardedConnector(),
  });
}

/** undici's "other side closed" on a socket that had already carried an answer: a kept-alive socket gone stale. */
export function isReusedSocketClosed(error: Error): boolean {
  const socket = (error as { code?: unknown; socket?: { bytesRead?: unknown } }).socket;
  return (
    (error as { code?: unknown }).code === 'UND_ERR_SOCKET' &&
    typeof socket?.bytesRead === 'number' &&
    socket.bytesRead > 0
  );
}
