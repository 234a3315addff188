/**
 * Which headers a proxy passes on. RFC 9110 §7.6.1 (Connection): a proxy MUST remove the
 * `Connection` header and every header it names before forwarding, and SHOULD remove the other
 * hop-by-hop fields: Proxy-Connection, Keep-Alive, TE, Transfer-Encoding and Upgrade
 * (RFC 9110 §7.6.1 lists them; Proxy-Authenticate/Proxy-Authorization are for the proxy itself,
 * RFC 9110 §11.7). Everything else is end-to-end and goes through, `Authorization` included.
 *
 * The rules work on raw header lists, so the handler (fetch `Headers`) and the native server (node's
 * `rawHeaders`) filter through the same code.
 */
const DROPPED = 1; // hop-by-hop: never forwarded
const RECOMPUTED_ON_REQUEST = 2; // `host`, `content-length`, `expect`: see below
const DECODED_ON_RESPONSE = 4; // `content-length`, `content-encoding` of a body we send decoded

/**
 * One lookup per header name. Recomputed on the request, because the proxy may change what they
 * describe: `host` names the upstream, not us; `content-length` changes when a body is repaired;
 * `expect: 100-continue` was answered by our own server, and we send the upstream a body we
 * already hold (undici's fetch even rejects the header). On the response, a decoded body makes
 * `content-encoding` and `content-length` describe bytes we do not send.
 */
const SPECIAL = new Map<string, number>([
  ['connection', DROPPED],
  ['proxy-connection', DROPPED],
  ['keep-alive', DROPPED],
  ['te', DROPPED],
  ['trailer', DROPPED],
  ['transfer-encoding', DROPPED],
  ['upgrade', DROPPED],
  ['proxy-authenticate', DROPPED],
  ['proxy-authorization', DROPPED],
  ['host', RECOMPUTED_ON_REQUEST],
  ['expect', RECOMPUTED_ON_REQUEST],
  ['content-length', RECOMPUTED_ON_REQUEST | DECODED_ON_RESPONSE],
  ['content-encoding', DECODED_ON_RESPONSE],
]);

/**
 * Headers as node's `rawHeaders` hold them: name, value, name, value… with names in the sender's
 * case. The native server filters these without building objects; the handler converts.
 */
export type RawHeaders = readonly string[];

/**
 * The raw headers without hop-by-hop ones, those `Connection` names, and those in `skipped`; names
 * lower-cased. One pass; the headers a `Connection` header names (rare: HTTP/1.1 clients send
 * `keep-alive` or `close`, which are dropped anyway) are taken out afterwards.
 */
function endToEnd(raw: RawHeaders, skipped: number): string[] {
  let named: Set<string> | undefined;
  const result: string[] = [];
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = lowerCase(raw[index] as string);
    const kind = SPECIAL.get(name);
    if (kind !== undefined) {
      if (name === 'connection') named = connectionTokens(raw[index + 1] as string, named);
      if ((kind & (DROPPED | skipped)) !== 0) continue;
    }
    result.push(name, raw[index + 1] as string);
  }
  if (named === undefined) return result;
  const kept: string[] = [];
  for (let index = 0; index + 1 < result.length; index += 2)
    if (!named.has(result[index] as string)) kept.push(result[index] as string, result[index + 1] as string);
  return kept;
}

/** The header names a `Connection` value lists (RFC 9110 §7.6.1), added to `named`; `named` stays undefined while none is listed. */
function connectionTokens(value: string, named: Set<string> | undefined): Set<string> | undefined {
  let found = named;
  for (const token of value.split(',')) {
    const listed = token.trim().toLowerCase();
    if (listed === '') continue;
    found ??= new Set();
    found.add(listed);
  }
  return found;
}

/** Most clients send lower-case names (HTTP/2 requires it); checking is cheaper than a new string. */
function lowerCase(name: string): string {
  for (let index = 0; index < name.length; index += 1) {
    const code = name.charCodeAt(index);
    if (code >= 65 && code <= 90) return name.toLowerCase();
  }
  return name;
}

/** The value of the first header with this name (given in lower case), or undefined. */
export function rawValue(raw: RawHeaders, lowerCaseName: string): string | undefined {
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index] as string;
    if (name.length === lowerCaseName.length && (name === lowerCaseName || name.toLowerCase() === lowerCaseName))
      return raw[index + 1];
  }
  return undefined;
}

/** The client's raw headers as they should reach the upstream (names lower-cased). */
export function upstreamRawHeaders(raw: RawHeaders): string[] {
  return endToEnd(raw, RECOMPUTED_ON_REQUEST);
}

/** The upstream's raw headers as they should reach the client; `decoded` when the body is sent decompressed. */
export function clientRawHeaders(raw: RawHeaders, decoded: boolean): string[] {
  return endToEnd(raw, decoded ? DECODED_ON_RESPONSE : 0);
}

/** A `Headers` as raw headers, one pair per Set-Cookie (iterating a `Headers` joins them). */
export function rawOf(headers: Headers): string[] {
  const raw: string[] = [];
  for (const [name, value] of headers) if (name !== 'set-cookie') raw.push(name, value);
  for (const cookie of headers.getSetCookie()) raw.push('set-cookie', cookie);
  return raw;
}

/** Raw headers as the pairs `new Headers(…)` takes. */
export function pairsOfRaw(raw: RawHeaders): [string, string][] {
  const pairs: [string, string][] = [];
  for (let index = 0; index + 1 < raw.length; index += 2) pairs.push([raw[index] as string, raw[index + 1] as string]);
  return pairs;
}

/** The client's headers as they should reach the upstream. */
export function toUpstreamHeaders(headers: Headers): Headers {
  return new Headers(pairsOfRaw(upstreamRawHeaders(rawOf(headers))));
}

/** The upstream's headers as they should reach the client (the body as fetch hands it over: decoded). */
export function toClientHeaders(headers: Headers): Headers {
  return new Headers(pairsOfRaw(clientRawHeaders(rawOf(headers), headers.has('content-encoding'))));
}
