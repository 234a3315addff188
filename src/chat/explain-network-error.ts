import { isPermanentConnectFailure } from '../agent/wire-error.js';

/** What the usual connection failures mean, in words. */
const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the server',
  CERT_HAS_EXPIRED: 'the server certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the server certificate is self-signed',
};

/**
 * Wraps `fetch` so that a connection failure reads `cannot reach http://host:port (connection
 * refused)` rather than undici's bare `fetch failed`; aborts and HTTP answers pass through as they are.
 */
export function explainNetworkErrors(base: typeof fetch): typeof fetch {
  return async (input, init) => {
    try {
      return await base(input, init);
    } catch (error) {
      if (error instanceof Error && error.name === 'AbortError') throw error;
      if (init?.signal?.aborted === true) throw error;
      const url = input instanceof Request ? input.url : String(input);
      // No `cause`: the runner appends a cause's message, and undici's is the unhelpful `fetch failed`.
      // `permanent` tells the runner not to retry what cannot work (a bad port, an unknown host).
      throw Object.assign(
        new Error(`cannot reach ${originOf(url)} (${reasonOf(error)})`),
        isPermanentConnectFailure(error, url) ? { permanent: true } : {},
      );
    }
  };
}

function reasonOf(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return REASONS[code] ?? code;
    current = (current as { cause?: unknown }).cause;
  }
  let innermost: unknown = error;
  while (innermost instanceof Error && innermost.cause instanceof Error) innermost = innermost.cause;
  return innermost instanceof Error ? innermost.message : String(innermost);
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
