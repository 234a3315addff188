import { request as httpRequest } from 'node:http';
import type { Agent, ClientRequest, IncomingMessage, OutgoingHttpHeaders, RequestOptions, ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Agent as HttpsAgent } from 'node:https';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { ProxyCore, ProxyExchange } from './create-proxy-core.js';
import { SilenceTimer } from './silence-timer.js';
import type { LocalAnswer } from './openai-error-response.js';
import { openAIError } from './openai-error-response.js';

/*
 * The proxy served natively on node streams (docs/decisions/http-native-server.md): the same
 * exchange as `createProxyHandler` — every decision comes from the proxy core — with node's own
 * objects carrying the bytes: the body read into a Buffer, the upstream reached with http.request
 * on a keep-alive agent, its answer piped back with backpressure. No Request, Response, Headers,
 * ReadableStream or AbortSignal per request: on Node 20 those cost more than the proxying itself.
 */

export interface UpstreamAgents {
  'http:': Agent;
  'https:': HttpsAgent;
}

const NO_BODY_STATUSES = new Set([101, 204, 205, 304]);

export function relayNative(core: ProxyCore, agents: UpstreamAgents, incoming: IncomingMessage, outgoing: ServerResponse, origin: string): void {
  const raw = incoming.rawHeaders;
  const pairs: [string, string][] = [];
  let requestId: string | undefined;
  let declared = 0;
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index] as string;
    const value = raw[index + 1] as string;
    pairs.push([name, value]);
    if (name.length === 12 && name.toLowerCase() === 'x-request-id') requestId = value;
    else if (name.length === 14 && name.toLowerCase() === 'content-length') declared = Number(value);
  }
  let exchange: ProxyExchange;
  try {
    // The URL is built on our own origin: the Host header is the client's to choose and is not trusted for routing.
    exchange = core.begin(incoming.method ?? 'GET', `${origin}${incoming.url ?? '/'}`, requestId);
  } catch (error) {
    writeAnswer(outgoing, badRequest(error));
    return;
  }
  if (exchange.local !== undefined) {
    exchange.answer(exchange.local);
    writeAnswer(outgoing, exchange.local);
    return;
  }
  const relay = new Relay(core, exchange, agents, pairs, incoming, outgoing);
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
  incoming.once('end', () => {
    if (!refused) relay.start(exchange.prepare(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
  });
  incoming.once('close', () => {
    if (!refused && !incoming.complete) exchange.fail('client-closed');
  });
}

/**
 * One proxied request on node streams, from sending it upstream to the end of the answer. A class,
 * not closures: one object per request with shared methods (this is the hot path).
 */
class Relay {
  readonly #exchange: ProxyExchange;
  readonly #incoming: IncomingMessage;
  readonly #outgoing: ServerResponse;
  readonly #options: RequestOptions & { headers: OutgoingHttpHeaders };
  readonly #secure: boolean;
  readonly #timer: SilenceTimer;
  #upstream: ClientRequest | undefined;
  #answer: IncomingMessage | undefined;
  #clientGone = false;
  /** The client has its answer's status (or a failure was answered): no more sending or failing over. */
  #settled = false;
  #ended = false;

  constructor(core: ProxyCore, exchange: ProxyExchange, agents: UpstreamAgents, pairs: [string, string][], incoming: IncomingMessage, outgoing: ServerResponse) {
    this.#exchange = exchange;
    this.#incoming = incoming;
    this.#outgoing = outgoing;
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of exchange.upstreamHeaders(pairs)) {
      const present = headers[name];
      headers[name] = present === undefined ? value : Array.isArray(present) ? [...present, value] : [String(present), value];
    }
    headers['accept-encoding'] = 'identity'; // nothing here decodes a compressed body but `decoderFor` below
    const target = core.upstream;
    this.#secure = target.protocol === 'https:';
    this.#options = { host: target.hostname, port: target.port, path: exchange.upstreamPath, method: incoming.method ?? 'GET', headers, agent: agents[this.#secure ? 'https:' : 'http:'] };
    this.#timer = new SilenceTimer(exchange.timeoutMs, () => this.#onSilence());
  }

  start(body: Uint8Array | undefined): void {
    this.#outgoing.once('close', () => this.#onClientClose());
    this.#exchange.sending();
    this.#send(body, false);
  }

  #send(body: Uint8Array | undefined, resent: boolean): void {
    if (body !== undefined) this.#options.headers['content-length'] = body.byteLength;
    this.#timer.arm();
    const request = (this.#secure ? httpsRequest : httpRequest)(this.#options);
    this.#upstream = request;
    let responded = false;
    request.once('response', (response: IncomingMessage) => {
      responded = true;
      this.#answer = response;
      this.#onResponse(response);
    });
    request.once('error', (error: NodeJS.ErrnoException) => {
      if (responded || this.#clientGone || this.#settled) return; // after an answer, the response side reports failures
      // A kept-alive socket the upstream closed just as we reused it: the request never reached
      // it, so it is sent once more on a fresh socket (the retry Node's http docs recommend).
      if (!resent && request.reusedSocket && !this.#timer.fired && isStaleSocketError(error)) {
        this.#send(body, true);
        return;
      }
      this.#settled = true;
      this.#timer.stop();
      const failure = this.#exchange.fail(this.#timer.fired ? 'timeout' : 'unreachable', error);
      if (failure !== undefined) writeAnswer(this.#outgoing, failure);
    });
    request.end(body);
  }

  #onResponse(response: IncomingMessage): void {
    if (this.#clientGone) {
      response.destroy();
      return;
    }
    const exchange = this.#exchange;
    const status = response.statusCode ?? 502;
    // Read off the raw pairs: `response.headers` would build a second copy of them per request.
    const pairs = pairsOf(response.rawHeaders);
    const decoder = decoderFor(valueOf(pairs, 'content-encoding'));
    const source: Readable = decoder === undefined ? response : pipeline(response, decoder, () => undefined);
    if (exchange.mayHeal(status)) {
      this.#readForHeal(response, source, status, pairs);
      return;
    }
    this.#settled = true;
    this.#timer.disarm();
    exchange.answered(status);
    const outgoing = this.#outgoing;
    outgoing.writeHead(status, response.statusMessage, exchange.clientHeaders(pairs, decoder !== undefined).flat());
    if (NO_BODY_STATUSES.has(status) || this.#incoming.method === 'HEAD') {
      response.resume();
      this.#end();
      return;
    }
    // An SSE client sees the status at once, before the first event; other bodies carry the headers in their first write.
    if (valueOf(pairs, 'content-type')?.startsWith('text/event-stream') === true) outgoing.flushHeaders();

    // Backpressure both ways: a full client socket pauses the upstream read (and the silence timer:
    // waiting on a slow client is not a silent upstream); `drain` resumes both.
    const timer = this.#timer;
    timer.arm();
    source.on('data', (chunk: Buffer) => {
      if (outgoing.write(chunk)) {
        timer.arm();
      } else {
        timer.disarm();
        source.pause();
      }
    });
    outgoing.on('drain', () => {
      if (this.#ended) return;
      timer.arm();
      source.resume();
    });
    source.once('end', () => this.#end());
    source.once('error', () => undefined); // reported by 'close' without 'end'
    source.once('close', () => {
      if (!this.#ended && !this.#clientGone) this.#fail();
    });
  }

  /** A 400 is read whole to classify it (error bodies are small): then either the one retry, or this text back. */
  #readForHeal(response: IncomingMessage, source: Readable, status: number, pairs: [string, string][]): void {
    const parts: Buffer[] = [];
    source.on('data', (chunk: Buffer) => parts.push(chunk));
    source.once('error', () => undefined);
    source.once('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      const exchange = this.#exchange;
      const retry = exchange.heal(status, text);
      if (retry !== undefined) {
        this.#answer = undefined;
        this.#send(retry, false);
        return;
      }
      this.#settled = true;
      exchange.answered(status);
      const headers = exchange.clientHeaders(pairs, true); // sent as the text it was read as
      headers.push(['content-length', String(Buffer.byteLength(text))]);
      this.#outgoing.writeHead(status, response.statusMessage, headers.flat());
      this.#outgoing.end(text);
      this.#ended = true;
      this.#timer.stop();
      exchange.finish('complete');
    });
    source.once('close', () => {
      if (!this.#settled && !response.complete && this.#answer === response) this.#fail();
    });
  }

  #end(): void {
    this.#ended = true;
    this.#timer.stop();
    this.#outgoing.end();
    this.#exchange.finish('complete');
  }

  #onSilence(): void {
    const error = new Error(`upstream silent for ${this.#exchange.timeoutMs} ms`);
    if (this.#answer !== undefined) this.#answer.destroy(error);
    else this.#upstream?.destroy(error);
  }

  #onClientClose(): void {
    if (this.#outgoing.writableFinished || this.#ended) return;
    this.#clientGone = true;
    this.#timer.stop();
    if (this.#answer !== undefined) this.#answer.destroy();
    else this.#upstream?.destroy();
    if (this.#settled) this.#exchange.finish('client-closed');
    else this.#exchange.fail('client-closed');
    this.#settled = true;
  }

  /** Upstream failed mid-body (a reset, a silence): the client sees a cut response, never a complete one. */
  #fail(): void {
    this.#settled = true;
    this.#ended = true;
    this.#timer.stop();
    const timedOut = this.#timer.fired;
    if (!this.#outgoing.headersSent) {
      // Cut while its 400 was being read for the heal decision: answered as fetch reports it, a failed upstream.
      const failure = this.#exchange.fail(timedOut ? 'timeout' : 'unreachable', new Error('the upstream closed the connection'));
      if (failure !== undefined) writeAnswer(this.#outgoing, failure);
      return;
    }
    this.#exchange.finish(timedOut ? 'upstream-timeout' : 'upstream-error');
    cutResponse(this.#outgoing);
  }
}

function valueOf(pairs: readonly [string, string][], lowerCaseName: string): string | undefined {
  for (const [name, value] of pairs) if (name.length === lowerCaseName.length && name.toLowerCase() === lowerCaseName) return value;
  return undefined;
}

function pairsOf(raw: string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let index = 0; index + 1 < raw.length; index += 2) pairs.push([raw[index] as string, raw[index + 1] as string]);
  return pairs;
}

export function writeAnswer(outgoing: ServerResponse, answer: LocalAnswer): void {
  if (outgoing.headersSent || outgoing.destroyed) return;
  const body = answer.body;
  outgoing.writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(body) });
  outgoing.end(body);
}

export function badRequest(error: unknown): LocalAnswer {
  const message = error instanceof Error ? error.message : String(error);
  return openAIError(400, `unstuck proxy: bad request (${message})`, 'bad_request');
}

/**
 * Ends a response without its final chunk, so the client sees a truncated response as an error,
 * never as a complete one. `end` on the socket flushes what was already written first (destroy
 * would drop it); a client that does not read it in time is cut off.
 */
export function cutResponse(outgoing: ServerResponse): void {
  const socket = outgoing.socket;
  if (socket === null || outgoing.destroyed) {
    outgoing.destroy();
    return;
  }
  while (socket.writableCorked > 0) socket.uncork();
  socket.end();
  setTimeout(() => socket.destroy(), 5000).unref();
}

export function isStaleSocketError(error: NodeJS.ErrnoException): boolean {
  return error.code === 'ECONNRESET' || error.code === 'EPIPE' || error.message === 'socket hang up';
}

/** A decoder for a body an upstream compressed although we asked for identity, or undefined. */
export function decoderFor(contentEncoding: string | undefined): ReturnType<typeof createGunzip> | undefined {
  const encoding = (contentEncoding ?? 'identity').trim().toLowerCase();
  if (encoding === 'gzip' || encoding === 'x-gzip') return createGunzip();
  if (encoding === 'deflate') return createInflate();
  if (encoding === 'br') return createBrotliDecompress();
  return undefined;
}
