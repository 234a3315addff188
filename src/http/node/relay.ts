import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Transform } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { ProxyExchange } from '../create-proxy-core.js';
import { SilenceTimer } from '../silence-timer.js';
import type { Encoding } from './content-decoding.js';
import { decoderOf, encodingOf, textOf } from './content-decoding.js';
import { isUpstreamEndedWhilePaused } from './guarded-connector.js';
import { cutResponse, writeAnswer } from './node-response.js';
import { isReusedSocketClosed } from './upstream-pool.js';

/*
 * The proxy served natively (docs/decisions/http-native-server.md, http-upstream-undici.md): the
 * same exchange as `createProxyHandler` — every decision comes from the proxy core — with the
 * cheapest carriers Node has: the client side on node:http's own request and response objects
 * (request-intake.ts reads the body into a Buffer), the upstream side on an undici `Pool` through
 * its `dispatch` callbacks (no ClientRequest, IncomingMessage or stream per request), its answer
 * written back with backpressure.
 */

/**
 * Where one relayed exchange is. Every event the relay gets (undici's callbacks, the client's
 * `drain` and `close`, the decoder's output) is read against this one value:
 *
 * - `sending`: dispatched upstream, no answer head yet; a stale kept-alive socket may be sent once more;
 * - `healing`: an answer that may be a pairing error, read whole for the heal decision (the client has nothing yet);
 * - `streaming`: the head went to the client; the body follows as it comes;
 * - `decoding-head`: a compressed body goes through the decoder; the head waits for its first decoded bytes,
 *   so a body that does not decode is a 502, not a cut 200;
 * - `decoding`: the same, the head sent;
 * - `ended`: the answer ended, was failed or was cut; nothing more is sent;
 * - `client-gone`: the client closed its connection first.
 *
 * `sending` → `healing` → (`sending` again for the one heal retry) → `streaming` | `decoding-head` →
 * `decoding` → `ended`; any phase before `ended` → `client-gone`.
 */
type Phase = 'sending' | 'healing' | 'streaming' | 'decoding-head' | 'decoding' | 'ended' | 'client-gone';

const NO_BODY_STATUSES = new Set([101, 204, 205, 304]);
/** Compressed input a decoder may hold before the upstream read waits for it (zlib works on the thread pool). */
const DECODER_INPUT_WINDOW = 1024 * 1024;

/**
 * One proxied request, from sending it upstream to the end of the answer. It is its own undici
 * dispatch handler (`onConnect` … `onComplete` / `onError`): one object per request, shared methods.
 * A heal retry dispatches again with the same handler, after the first answer has completed.
 */
export class Relay implements Dispatcher.DispatchHandlers {
  readonly #exchange: ProxyExchange;
  readonly #pool: Dispatcher;
  readonly #incoming: IncomingMessage;
  readonly #outgoing: ServerResponse;
  readonly #options: Dispatcher.DispatchOptions & { headers: string[] };
  readonly #timer: SilenceTimer;
  #phase: Phase = 'sending';
  #abort: ((error?: Error) => void) | undefined;
  /** The body of the attempt in flight (what a resend sends again). */
  #body: Uint8Array | undefined;
  #resume: (() => void) | undefined;
  #status = 0;
  #statusText = '';
  #headers: string[] = [];
  #encoding: Encoding | undefined;
  #decoder: Transform | undefined;
  #parts: Buffer[] = [];
  /** The answer's framing, to tell a complete body from a cut one when the upstream closes while it is held back. */
  #declaredLength: number | undefined;
  #chunked = false;
  /** The answer is `text/event-stream`: its head goes to the client at once, before the first event. */
  #eventStream = false;
  #received = 0;
  /** Backpressure, not a phase: the client's socket is full, and the upstream read waits for its `drain`. */
  #clientBlocked = false;
  /** The retry budget, not a phase: a stale kept-alive socket is resent once per exchange. */
  #resent = false;

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
    headers.push('accept-encoding', 'identity'); // nothing here decodes a compressed body but content-decoding.ts
    this.#options = {
      path: exchange.upstreamPath,
      method: (incoming.method ?? 'GET') as Dispatcher.HttpMethod,
      headers,
      body: null,
    };
    this.#timer = new SilenceTimer(exchange.timeoutMs, () => this.#onSilence());
  }

  start(body: Uint8Array | undefined): void {
    this.#outgoing.on('close', () => this.#guard(() => this.#onClientClose())); // emitted once per response
    this.#outgoing.on('drain', () => this.#guard(() => this.#onDrain()));
    this.#exchange.sending();
    this.#send(body);
  }

  /** Whether nothing more goes to the client. */
  get #over(): boolean {
    return this.#phase === 'ended' || this.#phase === 'client-gone';
  }

  #send(body: Uint8Array | undefined): void {
    this.#body = body;
    this.#options.body = body ?? null;
    this.#phase = 'sending';
    this.#timer.arm();
    try {
      this.#pool.dispatch(this.#options, this);
    } catch (error) {
      this.onError(error as Error); // options undici refuses (a header value it cannot send)
    }
  }

  onConnect(abort: (error?: Error) => void): void {
    this.#abort = abort;
    if (this.#phase === 'client-gone') abort(new Error('client closed the connection'));
  }

  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    if (status < 200 && status !== 101) return true; // 1xx informational: not forwarded, the answer follows
    this.#resume = resume;
    if (this.#phase === 'client-gone') return false;
    // One pass: the headers as strings, and the first of each header the relay reads (as `rawValue` finds them).
    const raw: string[] = [];
    let encoding: string | undefined;
    let length: string | undefined;
    let transfer: string | undefined;
    let type: string | undefined;
    for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
      const name = (rawHeaders[index] as Buffer).toString('latin1');
      const value = (rawHeaders[index + 1] as Buffer).toString('latin1');
      raw.push(name, value);
      switch (name.length) {
        case 12:
          if (type === undefined && isNamed(name, 'content-type')) type = value;
          break;
        case 14:
          if (length === undefined && isNamed(name, 'content-length')) length = value;
          break;
        case 16:
          if (encoding === undefined && isNamed(name, 'content-encoding')) encoding = value;
          break;
        case 17:
          if (transfer === undefined && isNamed(name, 'transfer-encoding')) transfer = value;
          break;
        default:
      }
    }
    const exchange = this.#exchange;
    this.#encoding = encodingOf(encoding);
    this.#declaredLength = lengthOf(length);
    this.#chunked = transfer?.toLowerCase().includes('chunked') === true;
    this.#eventStream = type?.startsWith('text/event-stream') === true;
    this.#received = 0;
    this.#status = status;
    this.#statusText = statusText;
    this.#headers = raw;
    // A body that says it is larger than any heal decision reads is relayed at once, as any answer.
    if (exchange.mayHeal(status) && (this.#declaredLength ?? 0) <= exchange.maxHealBytes) {
      this.#parts = [];
      this.#phase = 'healing';
      return true;
    }
    this.#answer();
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.#received += chunk.byteLength;
    switch (this.#phase) {
      case 'streaming':
        return this.#write(chunk);
      case 'decoding-head':
      case 'decoding':
        this.#timer.arm();
        return this.#decode(chunk);
      case 'healing':
        this.#timer.arm();
        this.#parts.push(chunk);
        if (this.#received <= this.#exchange.maxHealBytes) return true;
        return this.#passThrough(); // too large for a pairing error: the client gets it as it comes
      default:
        return true; // the body of an answer that has none for the client (HEAD, 204), or one no longer wanted
    }
  }

  onComplete(): void {
    switch (this.#phase) {
      case 'streaming':
        this.#end();
        return;
      case 'decoding-head':
      case 'decoding':
        this.#decoder?.end();
        return;
      case 'healing':
        this.#healOrAnswer();
        return;
      default:
        return;
    }
  }

  onError(error: Error): void {
    if (this.#over) return;
    const phase = this.#phase;
    // The upstream closed while its answer was held back for a slow client (guarded-connector.ts):
    // every byte it sent has been handed over; the framing says whether that was the whole body.
    if (isUpstreamEndedWhilePaused(error) && phase !== 'sending' && this.#bodyComplete()) {
      this.onComplete();
      return;
    }
    if (phase === 'sending') {
      // A kept-alive socket the upstream closed just as we reused it: sent once more, on a fresh
      // socket (the retry Node's http docs recommend; a fresh socket has read nothing yet).
      if (!this.#resent && !this.#timer.fired && isReusedSocketClosed(error)) {
        this.#resent = true;
        this.#send(this.#body);
        return;
      }
      // No answer yet: the client gets the 502/504 fetch would have made of it.
      this.#phase = 'ended';
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
    this.#timer.arm();
    if (NO_BODY_STATUSES.has(this.#status) || this.#incoming.method === 'HEAD') {
      this.#phase = 'streaming';
      this.#writeHead();
      this.#end();
      return;
    }
    if (this.#encoding === undefined) {
      this.#phase = 'streaming';
      this.#writeHead();
      // An SSE client sees the status at once, before the first event; other bodies carry the headers in their first write.
      if (this.#eventStream) this.#outgoing.flushHeaders();
      return;
    }
    this.#phase = 'decoding-head';
    const decoder = decoderOf(this.#encoding);
    this.#decoder = decoder;
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
      if (this.#phase === 'streaming') more = this.#write(part);
      else if (this.#phase === 'decoding-head' || this.#phase === 'decoding') more = this.#decode(part);
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
    this.#phase = 'ended';
    exchange.answered(this.#status);
    const headers = exchange.clientHeaders(this.#headers, true); // sent as the text it was read as
    headers.push('content-length', String(Buffer.byteLength(text)));
    this.#outgoing.writeHead(this.#status, this.#statusText, headers);
    this.#outgoing.end(text);
    this.#timer.stop();
    exchange.finish('complete');
  }

  #writeHead(): void {
    if (this.#phase === 'decoding-head') this.#phase = 'decoding';
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
    if (this.#phase === 'decoding-head') this.#writeHead();
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
    if (this.#over) return;
    this.#timer.arm();
    if (this.#phase === 'decoding-head' || this.#phase === 'decoding') this.#decoder?.resume();
    this.#resumeUpstream();
  }

  #resumeUpstream(): void {
    if (this.#clientBlocked || this.#over) return;
    if (
      (this.#phase === 'decoding-head' || this.#phase === 'decoding') &&
      (this.#decoder?.writableLength ?? 0) >= DECODER_INPUT_WINDOW
    )
      return;
    this.#resume?.();
  }

  #end(): void {
    if (this.#over) return;
    if (this.#phase === 'decoding-head') this.#writeHead();
    this.#phase = 'ended';
    this.#timer.stop();
    this.#outgoing.end();
    this.#exchange.finish('complete');
  }

  #onSilence(): void {
    this.#abort?.(new Error(`upstream silent for ${this.#exchange.timeoutMs} ms`));
  }

  #onClientClose(): void {
    if (this.#outgoing.writableFinished || this.#over) return;
    // The head had reached the client: its answer was cut short. Before that, the exchange failed.
    const answered = this.#phase === 'streaming' || this.#phase === 'decoding';
    this.#phase = 'client-gone';
    this.#timer.stop();
    this.#abort?.(new Error('client closed the connection'));
    this.#decoder?.destroy();
    if (answered) this.#exchange.finish('client-closed');
    else this.#exchange.fail('client-closed');
  }

  /** Upstream failed mid-body (a reset, a silence, a body that does not decode): the client sees a cut response, never a complete one. */
  #fail(): void {
    if (this.#over) return;
    this.#phase = 'ended';
    this.#timer.stop();
    this.#decoder?.destroy();
    this.#abort?.(new Error('the answer cannot be relayed'));
    const timedOut = this.#timer.fired;
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

/** A header name as it came (any case) is this lower-case one, of the same length. */
function isNamed(name: string, lowerCaseName: string): boolean {
  return name === lowerCaseName || name.toLowerCase() === lowerCaseName;
}

/** The value of a `content-length` header, or undefined when there is none (or it is no length). */
function lengthOf(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}
