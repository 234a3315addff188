import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { ProxyCore, ProxyExchange } from '../create-proxy-core.js';
import { badRequest, writeAnswer } from './node-response.js';
import { Relay } from './relay.js';

/**
 * The native relay's request intake: what the proxy core makes of one node:http request (a local
 * answer, a 413, or an exchange to relay), its body read into one Buffer within the core's limit,
 * then handed to the relay (relay.ts). No Request, Headers or stream per request.
 */
export function intakeRequest(
  core: ProxyCore,
  pool: Dispatcher,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  origin: string,
): void {
  const raw = incoming.rawHeaders;
  let requestId: string | undefined;
  let declared = 0;
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index] as string;
    if (name.length === 12 && name.toLowerCase() === 'x-request-id') requestId = raw[index + 1];
    else if (name.length === 14 && name.toLowerCase() === 'content-length') declared = Number(raw[index + 1]);
  }
  let exchange: ProxyExchange;
  try {
    // The URL is built on our own origin: the Host header is the client's to choose and is not trusted for routing.
    exchange = core.begin(incoming.method ?? 'GET', `${origin}${incoming.url ?? '/'}`, requestId);
  } catch (error) {
    writeAnswer(outgoing, badRequest(error));
    return;
  }
  const local = exchange.local;
  if (local !== undefined) {
    if (!exchange.isMetrics) {
      exchange.answer(local);
      writeAnswer(outgoing, local);
      return;
    }
    // /metrics is rendered when asked (prom-client renders asynchronously), never on a timer.
    core.metrics.collect().then(
      (body) => {
        const answer = { ...local, body };
        exchange.answer(answer);
        if (!outgoing.destroyed) writeAnswer(outgoing, answer);
      },
      () => {
        exchange.answer(local);
        if (!outgoing.destroyed) writeAnswer(outgoing, local);
      },
    );
    return;
  }
  const relay = new Relay(exchange, pool, raw, incoming, outgoing);
  if (!exchange.readsBody) {
    relay.start(undefined);
    return;
  }
  const limit = exchange.maxBodyBytes;
  if (declared > limit) {
    incoming.resume(); // discarded, so the 413 still reaches the client
    writeAnswer(outgoing, exchange.tooLarge(declared));
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let refused = false;
  incoming.on('data', (chunk: Buffer) => {
    if (refused) return; // the rest of a refused body is read and dropped
    size += chunk.byteLength;
    if (size <= limit) {
      chunks.push(chunk);
      return;
    }
    refused = true;
    writeAnswer(outgoing, exchange.tooLarge(size));
  });
  // `on`: a request emits `end` and `close` once each; `once` would wrap both listeners, per request.
  incoming.on('end', () => {
    if (!refused)
      relay.start(exchange.prepare(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
  });
  incoming.on('close', () => {
    if (!refused && !incoming.complete) exchange.fail('client-closed');
  });
}
