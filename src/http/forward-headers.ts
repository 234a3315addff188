/**
 * Which headers a proxy passes on. RFC 9110 §7.6.1 (Connection): a proxy MUST remove the
 * `Connection` header and every header it names before forwarding, and SHOULD remove the other
 * hop-by-hop fields: Proxy-Connection, Keep-Alive, TE, Transfer-Encoding and Upgrade
 * (RFC 9110 §7.6.1 lists them; Proxy-Authenticate/Proxy-Authorization are for the proxy itself,
 * RFC 9110 §11.7). Everything else is end-to-end and goes through, `Authorization` included.
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
/** fetch decodes a compressed body: then `content-encoding` and `content-length` describe bytes we do not send. */
const DECODED_ON_RESPONSE = new Set(['content-length', 'content-encoding']);

function copyEndToEnd(source: Headers, recomputed: ReadonlySet<string>): Headers {
  const named = new Set<string>();
  for (const token of (source.get('connection') ?? '').split(',')) {
    const name = token.trim().toLowerCase();
    if (name !== '') named.add(name);
  }
  const result = new Headers();
  for (const [name, value] of source) {
    if (HOP_BY_HOP.has(name) || named.has(name) || recomputed.has(name)) continue;
    if (name === 'set-cookie') continue; // joined by Headers iteration; copied one by one below
    result.append(name, value);
  }
  if (!named.has('set-cookie')) for (const cookie of source.getSetCookie()) result.append('set-cookie', cookie);
  return result;
}

/** The client's headers as they should reach the upstream. */
export function toUpstreamHeaders(headers: Headers): Headers {
  return copyEndToEnd(headers, RECOMPUTED_ON_REQUEST);
}

/** The upstream's headers as they should reach the client (the body as fetch hands it over: decoded). */
export function toClientHeaders(headers: Headers): Headers {
  return copyEndToEnd(headers, headers.has('content-encoding') ? DECODED_ON_RESPONSE : NONE);
}
