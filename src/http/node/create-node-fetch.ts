import type { IncomingMessage, RequestOptions } from 'node:http';
import { Agent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { pipeline, Readable } from 'node:stream';
import { decoderFor } from './content-decoding.js';
import { readableOf } from './readable-of.js';

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
  return nodeFetch as typeof fetch;
}

const STALE = Symbol('stale keep-alive socket');

function isStaleSocketError(error: NodeJS.ErrnoException): boolean {
  return error.code === 'ECONNRESET' || error.code === 'EPIPE' || error.message === 'socket hang up';
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
