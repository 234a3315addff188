import type { IncomingMessage, ServerResponse } from 'node:http';
import { openAIError, toResponse } from '../openai-error-response.js';
import { badRequest, cutResponse, drained, failRelay, writeAnswer } from './node-response.js';
import type { ServeOptions, ServingProxy } from './node-server.js';
import { listenNode } from './node-server.js';
import { readableOf } from './readable-of.js';

export interface ServeHandlerOptions extends ServeOptions {
  /**
   * When a body that is not an event stream sends its status: `'first-byte'` (default) with its
   * first bytes, so a body that fails before any (a compressed answer that does not decode) is
   * answered as a failed upstream (a 502), not as a 200 cut short; `'at-once'` as soon as the
   * handler returns (the emulator, whose scripted faults are 200s cut short). An event stream's
   * status always goes at once, before its first event.
   */
  sendHead?: 'first-byte' | 'at-once';
}

/**
 * Serves any `(Request) => Response` handler on node:http (the proxy handler, the emulator, a
 * test's own): each request becomes a fetch `Request`, its body streaming from the socket, and the
 * `Response` is written back chunk by chunk, waiting for `drain` so a slow client holds back the
 * body's source instead of filling memory. The server's hardening (node-server.ts) is the same as
 * `serveProxy`'s; see docs/decisions/node-carrier.md.
 */
export async function serveHandler(
  handler: (request: Request) => Promise<Response>,
  options: ServeHandlerOptions = {},
): Promise<ServingProxy> {
  const headAtOnce = options.sendHead === 'at-once';
  const served = await listenNode(options, (incoming, outgoing, origin) => {
    relay(handler, incoming, outgoing, origin, headAtOnce).catch((error: unknown) => failRelay(outgoing, error));
  });
  return Object.assign(served, { native: false });
}

async function relay(
  handler: (request: Request) => Promise<Response>,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  origin: string,
  headAtOnce: boolean,
): Promise<void> {
  const controller = new AbortController();
  outgoing.once('close', () => {
    if (!outgoing.writableFinished) controller.abort(new Error('client closed the connection'));
  });

  let response: Response;
  try {
    response = await handler(toRequest(incoming, origin, controller.signal));
  } catch (error) {
    // A handler answers its own failures; this is a request node:http accepted but fetch cannot
    // represent (or a handler that threw after all).
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
  let first: Awaited<ReturnType<typeof reader.read>> | undefined;
  if (headAtOnce || response.headers.get('content-type')?.startsWith('text/event-stream') === true) {
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
    // The body failed midway, or the client left: close the connection without the final chunk.
    await reader.cancel().catch(() => undefined);
    cutResponse(outgoing);
  }
}

/** A fetch `Request` of a node message; its body streams from the socket as the handler reads it. */
function toRequest(incoming: IncomingMessage, origin: string, signal: AbortSignal): Request {
  const headers: [string, string][] = [];
  const raw = incoming.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2)
    headers.push([raw[index] as string, raw[index + 1] as string]);
  const method = incoming.method ?? 'GET';
  // The URL is built on our own origin: the Host header is the client's to choose and is not trusted for routing.
  const url = `${origin}${incoming.url ?? '/'}`;
  if (method === 'GET' || method === 'HEAD') return new Request(url, { method, headers, signal });
  const init: RequestInit & { duplex: 'half' } = {
    method,
    headers,
    signal,
    body: readableOf(incoming),
    duplex: 'half',
  };
  return new Request(url, init);
}
