import { request as httpRequest } from 'node:http';
import type { Agent, ClientRequest, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Agent as HttpsAgent } from 'node:https';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { ProxyCore, ProxyExchange } from './create-proxy-core.js';
import { silenceTimer } from './create-proxy-handler.js';
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
  if (!exchange.readsBody) {
    forward(core, exchange, agents, pairs, undefined, incoming, outgoing);
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
  const onData = (chunk: Buffer): void => {
    size += chunk.byteLength;
    if (size > limit) {
      refused = true;
      incoming.off('data', onData);
      incoming.resume();
      writeAnswer(outgoing, exchange.tooLarge(size));
      return;
    }
    chunks.push(chunk);
  };
  incoming.on('data', onData);
  incoming.once('end', () => {
    if (refused) return;
    const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
    forward(core, exchange, agents, pairs, exchange.prepare(bytes), incoming, outgoing);
  });
  incoming.once('close', () => {
    if (!refused && !incoming.complete) exchange.fail('client-closed');
  });
}

function forward(core: ProxyCore, exchange: ProxyExchange, agents: UpstreamAgents, pairs: [string, string][], body: Uint8Array | undefined, incoming: IncomingMessage, outgoing: ServerResponse): void {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of exchange.upstreamHeaders(pairs)) {
    const present = headers[name];
    headers[name] = present === undefined ? value : Array.isArray(present) ? [...present, value] : [String(present), value];
  }
  headers['accept-encoding'] = 'identity'; // nothing here decodes a compressed body but the relay below
  const target = core.upstream;
  const secure = target.protocol === 'https:';
  const options = { host: target.hostname, port: target.port, path: exchange.upstreamPath, method: incoming.method ?? 'GET', headers, agent: agents[secure ? 'https:' : 'http:'] };

  let upstream: ClientRequest | undefined;
  let answer: IncomingMessage | undefined;
  let clientGone = false;
  let settled = false;
  const timer = silenceTimer(exchange.timeoutMs, () => {
    const error = new Error(`upstream silent for ${exchange.timeoutMs} ms`);
    if (answer !== undefined) answer.destroy(error);
    else upstream?.destroy(error);
  });
  outgoing.once('close', () => {
    if (outgoing.writableFinished) return;
    clientGone = true;
    timer.stop();
    if (answer !== undefined) answer.destroy();
    else upstream?.destroy();
    if (!settled) {
      settled = true;
      exchange.fail('client-closed');
    } else {
      exchange.finish('client-closed');
    }
  });

  const send = (bytes: Uint8Array | undefined, resent: boolean): void => {
    if (bytes !== undefined) headers['content-length'] = bytes.byteLength;
    timer.arm();
    let responded = false;
    const request = (secure ? httpsRequest : httpRequest)(options, (response) => {
      responded = true;
      answer = response;
      onResponse(response);
    });
    upstream = request;
    request.once('error', (error: NodeJS.ErrnoException) => {
      if (responded || clientGone || settled) return; // after an answer, the response side reports failures
      // A kept-alive socket the upstream closed just as we reused it: the request never reached
      // it, so it is sent once more on a fresh socket (the retry Node's http docs recommend).
      if (!resent && request.reusedSocket && !timer.fired && isStaleSocketError(error)) {
        send(bytes, true);
        return;
      }
      settled = true;
      timer.stop();
      const failure = exchange.fail(timer.fired ? 'timeout' : 'unreachable', error);
      if (failure !== undefined) writeAnswer(outgoing, failure);
    });
    request.end(bytes);
  };

  const onResponse = (response: IncomingMessage): void => {
    if (clientGone) {
      response.destroy();
      return;
    }
    const status = response.statusCode ?? 502;
    // Read off the raw pairs: `response.headers` would build a second copy of them per request.
    const pairs = pairsOf(response.rawHeaders);
    const decoder = decoderFor(valueOf(pairs, 'content-encoding'));
    const source: Readable = decoder === undefined ? response : pipeline(response, decoder, () => undefined);
    if (exchange.mayHeal(status)) {
      // Read whole to classify it (error bodies are small); then either the one retry, or this text back.
      const parts: Buffer[] = [];
      source.on('data', (chunk: Buffer) => parts.push(chunk));
      source.once('error', () => undefined);
      source.once('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        const retry = exchange.heal(status, text);
        if (retry !== undefined) {
          answer = undefined;
          send(retry, false);
          return;
        }
        settled = true;
        timer.stop();
        exchange.answered(status);
        const headers = exchange.clientHeaders(pairs, true);
        headers.push(['content-length', String(Buffer.byteLength(text))]);
        outgoing.writeHead(status, response.statusMessage, headers.flat());
        outgoing.end(text);
        exchange.finish('complete');
      });
      source.once('close', () => {
        if (!settled && !response.complete && answer === response) fail();
      });
      return;
    }

    settled = true;
    timer.disarm();
    exchange.answered(status);
    outgoing.writeHead(status, response.statusMessage, exchange.clientHeaders(pairs, decoder !== undefined).flat());
    if (NO_BODY_STATUSES.has(status) || incoming.method === 'HEAD') {
      response.resume();
      timer.stop();
      outgoing.end();
      exchange.finish('complete');
      return;
    }
    // An SSE client sees the status at once, before the first event; other bodies carry the headers in their first write.
    if (valueOf(pairs, 'content-type')?.startsWith('text/event-stream') === true) outgoing.flushHeaders();

    // Backpressure both ways: a full client socket pauses the upstream read (and the silence timer:
    // waiting on a slow client is not a silent upstream); `drain` resumes both.
    timer.arm();
    let ended = false;
    source.on('data', (chunk: Buffer) => {
      if (outgoing.write(chunk)) {
        timer.arm();
      } else {
        timer.disarm();
        source.pause();
      }
    });
    outgoing.on('drain', () => {
      if (ended) return;
      timer.arm();
      source.resume();
    });
    source.once('end', () => {
      ended = true;
      timer.stop();
      outgoing.end();
      exchange.finish('complete');
    });
    source.once('error', () => undefined);
    source.once('close', () => {
      if (!ended && !clientGone) fail();
    });
  };

  /** Upstream failed mid-body (a reset, a silence): the client sees a cut response, never a complete one. */
  const fail = (): void => {
    settled = true;
    timer.stop();
    if (!outgoing.headersSent) {
      // Cut while its 400 was being read for the heal decision: answered as fetch reports it, a failed upstream.
      const failure = exchange.fail(timer.fired ? 'timeout' : 'unreachable', new Error('the upstream closed the connection'));
      if (failure !== undefined) writeAnswer(outgoing, failure);
      return;
    }
    exchange.finish(timer.fired ? 'upstream-timeout' : 'upstream-error');
    cutResponse(outgoing);
  };

  exchange.sending();
  send(body, false);
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
