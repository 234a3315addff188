import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Transform } from 'node:stream';
import {
  brotliDecompressSync,
  createBrotliDecompress,
  createGunzip,
  createInflate,
  gunzipSync,
  inflateSync,
} from 'node:zlib';
import type { Dispatcher } from 'undici';
import { Pool } from 'undici';
import type { ProxyCore, ProxyExchange } from './create-proxy-core.js';
import { rawValue } from './forward-headers.js';
import { createGuardedConnector, isUpstreamEndedWhilePaused } from './guarded-connector.js';
import type { LocalAnswer } from './openai-error-response.js';
import { openAIError } from './openai-error-response.js';
import { SilenceTimer } from './silence-timer.js';

/*
 * The proxy served natively (docs/decisions/http-native-server.md, http-upstream-undici.md): the
 * same exchange as `createProxyHandler` — every decision comes from the proxy core — with the
 * cheapest carriers Node has: the client side on node:http's own request and response objects,
 * the body read into a Buffer; the upstream side on an undici `Pool` through its `dispatch`
 * callbacks (no ClientRequest, IncomingMessage or stream per request), its answer written back
 * with backpressure. No Request, Response, Headers, ReadableStream or AbortSignal per request.
 */

const NO_BODY_STATUSES = new Set([101, 204, 205, 304]);
/** Compressed input a decoder may hold before the upstream read waits for it (zlib works on the thread pool). */
const DECODER_INPUT_WINDOW = 1024 * 1024;

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

export function relayNative(
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
  if (exchange.local !== undefined) {
    exchange.answer(exchange.local);
    writeAnswer(outgoing, exchange.local);
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
  incoming.once('end', () => {
    if (!refused)
      relay.start(exchange.prepare(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
  });
  incoming.once('close', () => {
    if (!refused && !incoming.complete) exchange.fail('client-closed');
  });
}

/**
 * One proxied request, from sending it upstream to the end of the answer. It is its own undici
 * dispatch handler (`onConnect` … `onComplete` / `onError`): one object per request, shared methods.
 * A heal retry dispatches again with the same handler, after the first answer has completed.
 */
class Relay implements Dispatcher.DispatchHandlers {
  readonly #exchange: ProxyExchange;
  readonly #pool: Dispatcher;
  readonly #incoming: IncomingMessage;
  readonly #outgoing: ServerResponse;
  readonly #options: Dispatcher.DispatchOptions & { headers: string[] };
  readonly #timer: SilenceTimer;
  #abort: ((error?: Error) => void) | undefined;
  /** The body of the attempt in flight (what a resend sends again). */
  #body: Uint8Array | undefined;
  #resume: (() => void) | undefined;
  #status = 0;
  #statusText = '';
  #headers: string[] = [];
  /** How the answer's body is handled: sent as it comes, decoded first, or read whole for the heal decision. */
  #mode: 'stream' | 'decode' | 'heal' | 'none' = 'none';
  #encoding: Encoding | undefined;
  #decoder: Transform | undefined;
  #parts: Buffer[] = [];
  /** The answer's framing, to tell a complete body from a cut one when the upstream closes while it is held back. */
  #declaredLength: number | undefined;
  #chunked = false;
  #received = 0;
  /** The status and headers of a compressed answer, not yet written: they go with its first decoded bytes. */
  #headPending = false;
  /** The client's socket is full: the upstream read waits for its `drain`. */
  #clientBlocked = false;
  #clientGone = false;
  #resent = false;
  /** The client has its answer's status (or a failure was answered): no more sending or failing over. */
  #settled = false;
  #ended = false;

  constructor(
    exchange: ProxyExchange,
    pool: Dispatcher,
    raw: readonly string[],
    incoming: IncomingMessage,
    outgoing: ServerResponse,
  ) {
    this.#exchange = exchange;
    this.#pool = pool;
    this.#incoming = incoming;
    this.#outgoing = outgoing;
    const headers = exchange.upstreamHeaders(raw);
    headers.push('accept-encoding', 'identity'); // nothing here decodes a compressed body but `decoderOf` below
    this.#options = {
      path: exchange.upstreamPath,
      method: (incoming.method ?? 'GET') as Dispatcher.HttpMethod,
      headers,
      body: null,
    };
    this.#timer = new SilenceTimer(exchange.timeoutMs, () => this.#onSilence());
  }

  start(body: Uint8Array | undefined): void {
    this.#outgoing.once('close', () => this.#guard(() => this.#onClientClose()));
    this.#outgoing.on('drain', () => this.#guard(() => this.#onDrain()));
    this.#exchange.sending();
    this.#send(body);
  }

  #send(body: Uint8Array | undefined): void {
    this.#body = body;
    this.#options.body = body ?? null;
    this.#mode = 'none';
    this.#timer.arm();
    try {
      this.#pool.dispatch(this.#options, this);
    } catch (error) {
      this.onError(error as Error); // options undici refuses (a header value it cannot send)
    }
  }

  onConnect(abort: (error?: Error) => void): void {
    this.#abort = abort;
    if (this.#clientGone) abort(new Error('client closed the connection'));
  }

  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    if (status < 200 && status !== 101) return true; // 1xx informational: not forwarded, the answer follows
    this.#resume = resume;
    if (this.#clientGone) return false;
    const raw: string[] = [];
    for (let index = 0; index < rawHeaders.length; index += 1)
      raw.push((rawHeaders[index] as Buffer).toString('latin1'));
    const exchange = this.#exchange;
    this.#encoding = encodingOf(rawValue(raw, 'content-encoding'));
    this.#declaredLength = lengthOf(rawValue(raw, 'content-length'));
    this.#chunked = rawValue(raw, 'transfer-encoding')?.toLowerCase().includes('chunked') === true;
    this.#received = 0;
    this.#status = status;
    this.#statusText = statusText;
    this.#headers = raw;
    // A body that says it is larger than any heal decision reads is relayed at once, as any answer.
    if (exchange.mayHeal(status) && (this.#declaredLength ?? 0) <= exchange.maxHealBytes) {
      this.#parts = [];
      this.#mode = 'heal';
      return true;
    }
    this.#answer();
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.#received += chunk.byteLength;
    switch (this.#mode) {
      case 'stream':
        return this.#write(chunk);
      case 'decode':
        this.#timer.arm();
        return this.#decode(chunk);
      case 'heal':
        this.#timer.arm();
        this.#parts.push(chunk);
        if (this.#received <= this.#exchange.maxHealBytes) return true;
        return this.#passThrough(); // too large for a pairing error: the client gets it as it comes
      default:
        return true; // the body of an answer that has none for the client (HEAD, 204)
    }
  }

  onComplete(): void {
    switch (this.#mode) {
      case 'stream':
        this.#end();
        return;
      case 'decode':
        this.#decoder?.end();
        return;
      case 'heal':
        this.#healOrAnswer();
        return;
      default:
        return;
    }
  }

  onError(error: Error): void {
    if (this.#ended || this.#clientGone) return;
    // The upstream closed while its answer was held back for a slow client (guarded-connector.ts):
    // every byte it sent has been handed over; the framing says whether that was the whole body.
    if (isUpstreamEndedWhilePaused(error) && this.#mode !== 'none' && this.#bodyComplete()) {
      this.onComplete();
      return;
    }
    // A kept-alive socket the upstream closed just as we reused it: sent once more, on a fresh
    // socket (the retry Node's http docs recommend; a fresh socket has read nothing yet).
    if (!this.#resent && !this.#settled && this.#mode === 'none' && !this.#timer.fired && isReusedSocketClosed(error)) {
      this.#resent = true;
      this.#send(this.#body);
      return;
    }
    if (!this.#settled && this.#mode !== 'heal') {
      // No answer yet: the client gets the 502/504 fetch would have made of it.
      this.#settled = true;
      this.#ended = true;
      this.#timer.stop();
      const failure = this.#exchange.fail(this.#timer.fired ? 'timeout' : 'unreachable', error);
      if (failure !== undefined) writeAnswer(this.#outgoing, failure);
      return;
    }
    this.#fail();
  }

  /** Whether the bytes received are the whole body its headers announced (a body without length or chunks ends with the connection). */
  #bodyComplete(): boolean {
    if (this.#declaredLength !== undefined) return this.#received === this.#declaredLength;
    return !this.#chunked;
  }

  /** The answer's status and headers go to the client; its body follows as it comes (decoded first when compressed). */
  #answer(): void {
    this.#settled = true;
    this.#timer.arm();
    const raw = this.#headers;
    if (NO_BODY_STATUSES.has(this.#status) || this.#incoming.method === 'HEAD') {
      this.#writeHead();
      this.#mode = 'none';
      this.#end();
      return;
    }
    if (this.#encoding === undefined) {
      this.#writeHead();
      // An SSE client sees the status at once, before the first event; other bodies carry the headers in their first write.
      if (rawValue(raw, 'content-type')?.startsWith('text/event-stream') === true) this.#outgoing.flushHeaders();
      this.#mode = 'stream';
      return;
    }
    // A compressed body: the headers wait for its first decoded bytes, so one that does not decode is a 502, not a cut 200.
    this.#headPending = true;
    const decoder = decoderOf(this.#encoding);
    this.#decoder = decoder;
    this.#mode = 'decode';
    decoder.on('data', (chunk: Buffer) =>
      this.#guard(() => {
        if (!this.#write(chunk)) decoder.pause();
      }),
    );
    decoder.on('drain', () => this.#guard(() => this.#resumeUpstream()));
    decoder.once('end', () => this.#guard(() => this.#end()));
    decoder.once('error', () => this.#guard(() => this.#fail()));
  }

  /**
   * Feeds the decoder. The upstream read is held back only for the client (its socket is full) or
   * when the decoder has a whole window of input waiting, never merely because zlib works on the
   * thread pool: a paused read is what a closing upstream must not find (guarded-connector.ts).
   */
  #decode(chunk: Buffer): boolean {
    const decoder = this.#decoder as Transform;
    decoder.write(chunk);
    return !this.#clientBlocked && decoder.writableLength < DECODER_INPUT_WINDOW;
  }

  /** A 400 too large for the heal decision: what was read goes out first, the rest as it comes. */
  #passThrough(): boolean {
    const parts = this.#parts;
    this.#parts = [];
    this.#answer();
    let more = true;
    for (const part of parts) {
      if (this.#mode === 'stream') more = this.#write(part);
      else if (this.#mode === 'decode') more = this.#decode(part);
    }
    return more;
  }

  /** A 400 read whole: either the one heal retry, or this text back as it was read. */
  #healOrAnswer(): void {
    let text: string;
    try {
      text = textOf(Buffer.concat(this.#parts), this.#encoding, this.#exchange.maxHealBytes);
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
        // A small compressed body that decodes past the limit (a compression bomb): relayed, decoded as it streams.
        this.#passThrough();
        this.onComplete();
        return;
      }
      this.#fail(); // a compressed body that does not decode
      return;
    }
    this.#parts = [];
    const exchange = this.#exchange;
    const retry = exchange.heal(this.#status, text);
    if (retry !== undefined) {
      this.#send(retry);
      return;
    }
    this.#settled = true;
    exchange.answered(this.#status);
    const headers = exchange.clientHeaders(this.#headers, true); // sent as the text it was read as
    headers.push('content-length', String(Buffer.byteLength(text)));
    this.#outgoing.writeHead(this.#status, this.#statusText, headers);
    this.#outgoing.end(text);
    this.#ended = true;
    this.#timer.stop();
    exchange.finish('complete');
  }

  #writeHead(): void {
    this.#headPending = false;
    this.#exchange.answered(this.#status);
    this.#outgoing.writeHead(
      this.#status,
      this.#statusText,
      this.#exchange.clientHeaders(this.#headers, this.#encoding !== undefined),
    );
  }

  /**
   * Backpressure both ways: a full client socket pauses the upstream read (and the silence timer:
   * waiting on a slow client is not a silent upstream); `drain` resumes both.
   */
  #write(chunk: Buffer): boolean {
    if (this.#headPending) this.#writeHead();
    if (this.#outgoing.write(chunk)) {
      this.#timer.arm();
      return true;
    }
    this.#clientBlocked = true;
    this.#timer.disarm();
    return false;
  }

  #onDrain(): void {
    this.#clientBlocked = false;
    if (this.#ended) return;
    this.#timer.arm();
    if (this.#mode === 'decode') this.#decoder?.resume();
    this.#resumeUpstream();
  }

  #resumeUpstream(): void {
    if (this.#clientBlocked || this.#ended) return;
    if (this.#mode === 'decode' && (this.#decoder?.writableLength ?? 0) >= DECODER_INPUT_WINDOW) return;
    this.#resume?.();
  }

  #end(): void {
    if (this.#ended) return;
    if (this.#headPending) this.#writeHead();
    this.#ended = true;
    this.#timer.stop();
    this.#outgoing.end();
    this.#exchange.finish('complete');
  }

  #onSilence(): void {
    this.#abort?.(new Error(`upstream silent for ${this.#exchange.timeoutMs} ms`));
  }

  #onClientClose(): void {
    if (this.#outgoing.writableFinished || this.#ended) return;
    this.#clientGone = true;
    this.#timer.stop();
    this.#abort?.(new Error('client closed the connection'));
    this.#decoder?.destroy();
    if (this.#settled && !this.#headPending) this.#exchange.finish('client-closed');
    else this.#exchange.fail('client-closed');
    this.#settled = true;
  }

  /** Upstream failed mid-body (a reset, a silence, a body that does not decode): the client sees a cut response, never a complete one. */
  #fail(): void {
    if (this.#ended) return;
    this.#settled = true;
    this.#ended = true;
    this.#timer.stop();
    this.#decoder?.destroy();
    this.#abort?.(new Error('the answer cannot be relayed'));
    const timedOut = this.#timer.fired;
    this.#headPending = false;
    if (!this.#outgoing.headersSent) {
      // Cut while its 400 was being read for the heal decision: answered as fetch reports it, a failed upstream.
      const failure = this.#exchange.fail(
        timedOut ? 'timeout' : 'unreachable',
        new Error('the upstream closed the connection or sent a body that cannot be decoded'),
      );
      if (failure !== undefined) writeAnswer(this.#outgoing, failure);
      return;
    }
    this.#exchange.finish(timedOut ? 'upstream-timeout' : 'upstream-error');
    cutResponse(this.#outgoing);
  }

  /**
   * Runs one of this relay's event listeners. An error escaping one (a bug here, or in what a
   * stream does with what an upstream sent) fails this exchange alone instead of the process.
   */
  #guard(listener: () => void): void {
    try {
      listener();
    } catch (error) {
      this.#exchange.noteError(error);
      try {
        this.#fail();
      } catch {
        this.#outgoing.destroy();
      }
    }
  }
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

/** undici's "other side closed" on a socket that had already carried an answer: a kept-alive socket gone stale. */
function isReusedSocketClosed(error: Error): boolean {
  const socket = (error as { code?: unknown; socket?: { bytesRead?: unknown } }).socket;
  return (
    (error as { code?: unknown }).code === 'UND_ERR_SOCKET' &&
    typeof socket?.bytesRead === 'number' &&
    socket.bytesRead > 0
  );
}

export function isStaleSocketError(error: NodeJS.ErrnoException): boolean {
  return error.code === 'ECONNRESET' || error.code === 'EPIPE' || error.message === 'socket hang up';
}

type Encoding = 'gzip' | 'deflate' | 'br';

/** The compression of a body an upstream compressed although we asked for identity, or undefined. */
function encodingOf(contentEncoding: string | undefined): Encoding | undefined {
  if (contentEncoding === undefined) return undefined;
  const encoding = contentEncoding.trim().toLowerCase();
  if (encoding === 'gzip' || encoding === 'x-gzip') return 'gzip';
  if (encoding === 'deflate' || encoding === 'br') return encoding;
  return undefined;
}

/** A decoder for a body an upstream compressed although we asked for identity, or undefined. */
export function decoderFor(contentEncoding: string | undefined): Transform | undefined {
  const encoding = encodingOf(contentEncoding);
  return encoding === undefined ? undefined : decoderOf(encoding);
}

function decoderOf(encoding: Encoding): Transform {
  if (encoding === 'gzip') return createGunzip();
  if (encoding === 'deflate') return createInflate();
  return createBrotliDecompress();
}

/** The value of a `content-length` header, or undefined when there is none (or it is no length). */
function lengthOf(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}

/** A whole (small) body as text, decoded first when the upstream compressed it; a decoded body over `limit` throws ERR_BUFFER_TOO_LARGE. */
function textOf(bytes: Buffer, encoding: Encoding | undefined, limit: number): string {
  const options = { maxOutputLength: limit };
  if (encoding === 'gzip') return gunzipSync(bytes, options).toString('utf8');
  if (encoding === 'deflate') return inflateSync(bytes, options).toString('utf8');
  if (encoding === 'br') return brotliDecompressSync(bytes, options).toString('utf8');
  return bytes.toString('utf8');
}
