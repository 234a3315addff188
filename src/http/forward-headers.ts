/**
 * Which headers a proxy passes on. RFC 9110 §7.6.1 (Connection): a proxy MUST remove the
 * `Connection` header and every header it names before forwarding, and SHOULD remove the other
 * hop-by-hop fields: Proxy-Connection, Keep-Alive, TE, Transfer-Encoding and Upgrade
 * (RFC 9110 §7.6.1 lists them; Proxy-Authenticate/Proxy-Authorization are for the proxy itself,
 * RFC 9110 §11.7). Everything else is end-to-end and goes through, `Authorization` included.
 *
 * The rules work on header pairs, so the handler (fetch `Headers`) and the native server (node's
 * `rawHeaders`) filter through the same code.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
]);

/**
 * Headers this proxy recomputes rather than copies, because it may change what they describe:
 * `host` names the upstream, not us; `content-length` changes when a body is repaired; `expect:
 * 100-continue` was answered by our own server, and we send the upstream a body we already hold
 * (undici's fetch even rejects the header).
 */
const RECOMPUTED_ON_REQUEST = new Set(['host', 'content-length', 'expect']);
const NONE = new Set<string>();
/** A decoded body: then `content-encoding` and `content-length` describe bytes we do not send. */
const DECODED_ON_RESPONSE = new Set(['content-length', 'content-encoding']);

/** A header as a pair; names may come in any case (node's rawHeaders keep the sender's). */
export type HeaderPair = readonly [name: string, value: string];

function endToEnd(pairs: readonly HeaderPair[], recomputed: ReadonlySet<string>): [string, string][] {
  let named: Set<string> | undefined;
  for (const [name, value] of pairs) {
    if (name.length !== 10 || name.toLowerCase() !== 'connection') continue;
    for (const token of value.split(',')) {
      const listed = token.trim().toLowerCase();
      if (listed !== '') (named ??= new Set()).add(listed);
    }
  }
  const result: [string, string][] = [];
  for (const [name, value] of pairs) {
    const lower = isLowerCase(name) ? name : name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || recomputed.has(lower) || named?.has(lower) === true) continue;
    result.push([lower, value]);
  }
  return result;
}

/** Most clients send lower-case names (HTTP/2 requires it); checking is cheaper than a new string. */
function isLowerCase(name: string): boolean {
  for (let index = 0; index < name.length; index += 1) {
    const code = name.charCodeAt(index);
    if (code >= 65 && code <= 90) return false;
  }
  return true;
}

/** The client's header pairs as they should reach the upstream (names lower-cased). */
export function upstreamHeaderPairs(pairs: readonly HeaderPair[]): [string, string][] {
  return endToEnd(pairs, RECOMPUTED_ON_REQUEST);
}

/** The upstream's header pairs as they should reach the client; `decoded` when the body is sent decompressed. */
export function clientHeaderPairs(pairs: readonly HeaderPair[], decoded: boolean): [string, string][] {
  return endToEnd(pairs, decoded ? DECODED_ON_RESPONSE : NONE);
}

/** Pairs of a `Headers`, one per Set-Cookie (iterating a `Headers` joins them). */
export function pairsOf(headers: Headers): [string, string][] {
  const pairs: [string, string][] = [];
  for (const [name, value] of headers) if (name !== 'set-cookie') pairs.push([name, value]);
  for (const cookie of headers.getSetCookie()) pairs.push(['set-cookie', cookie]);
  return pairs;
}

/** The client's headers as they should reach the upstream. */
export function toUpstreamHeaders(headers: Headers): Headers {
  return new Headers(upstreamHeaderPairs(pairsOf(headers)));
}

/** The upstream's headers as they should reach the client (the body as fetch hands it over: decoded). */
export function toClientHeaders(headers: Headers): Headers {
  return new Headers(clientHeaderPairs(pairsOf(headers), headers.has('content-encoding')));
}
