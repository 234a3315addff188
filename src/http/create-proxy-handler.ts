import type { ProxyExchange, ProxyOptions } from './create-proxy-core.js';
import { createProxyCore } from './create-proxy-core.js';
import { pairsOfRaw, rawOf } from './forward-headers.js';
import type { LocalAnswer } from './openai-error-response.js';
import { toResponse } from './openai-error-response.js';
import type { ProxyMetrics } from './proxy-metrics.js';
import { readAnswerText } from './read-answer-text.js';
import { readLimitedBody } from './read-limited-body.js';
import { SilenceTimer } from './silence-timer.js';

export type { ProxyLogEntry } from './create-proxy-core.js';
export { DEFAULT_MAX_BODY_BYTES, DEFAULT_UPSTREAM_TIMEOUT_MS } from './create-proxy-core.js';

export interface ProxyHandlerOptions extends ProxyOptions {
  /** How to reach the upstream (default: the global fetch). */
  fetch?: typeof fetch;
}

/**
 * What the handler reads of a request: a fetch `Request` has all of it, and so does a plain object
 * of these fields (constructing a `Request` costs more on Node 20 than everything else the proxy
 * does with a small request; `unstuck proxy` is served natively and constructs none).
 */
export type ProxyRequest = Pick<Request, 'method' | 'url' | 'headers' | 'body' | 'signal'>;

export type ProxyHandler = ((request: ProxyRequest) => Promise<Response>) & { readonly metrics: ProxyMetrics };

const NO_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * The proxy as a function of a fetch `Request`: no socket, so it is tested in-process and any
 * server can carry it. Every decision (what is local, the limit, the repair, the heal, the
 * headers, the log line) is the proxy core's (`create-proxy-core.ts`); this function only moves
 * bytes with fetch objects. Every failure becomes a response in the error shape of the request's wire
 * (OpenAI's for chat and any other path, Anthropic's for `/v1/messages`); it never throws.
 */
export function createProxyHandler(options: ProxyHandlerOptions): ProxyHandler {
  const core = createProxyCore(options);
  const send = options.fetch ?? ((input, init) => globalThis.fetch(input, init));

  async function handle(request: ProxyRequest): Promise<Response> {
    const exchange = core.begin(request.method, request.url, request.headers.get('x-request-id'));
    if (exchange.local !== undefined) {
      // /metrics is rendered when asked (prom-client renders asynchronously).
      const answer = exchange.isMetrics
        ? { ...exchange.local, body: await core.metrics.collect().catch(() => '') }
        : exchange.local;
      exchange.answer(answer);
      return toResponse(answer);
    }

    let body: Uint8Array | undefined;
    if (exchange.readsBody) {
      const declared = Number(request.headers.get('content-length') ?? '0');
      const read =
        declared > exchange.maxBodyBytes
          ? { ok: false as const, size: declared }
          : await readLimitedBody(request.body, exchange.maxBodyBytes);
      if (!read.ok) return toResponse(exchange.tooLarge(read.size));
      body = exchange.prepare(read.bytes);
    }
    return forward(exchange, request, body);
  }

  async function forward(
    exchange: ProxyExchange,
    request: ProxyRequest,
    body: Uint8Array | undefined,
  ): Promise<Response> {
    // One controller for the whole exchange: the client going away and a silent upstream both end it.
    const controller = new AbortController();
    const onClientGone = (): void => controller.abort(new Error('client closed the connection'));
    if (request.signal.aborted) onClientGone();
    request.signal.addEventListener('abort', onClientGone, { once: true });
    const timer = new SilenceTimer(exchange.timeoutMs, () =>
      controller.abort(new Error(`upstream silent for ${exchange.timeoutMs} ms`)),
    );
    const release = (): void => {
      timer.stop();
      request.signal.removeEventListener('abort', onClientGone);
    };
    const headers = pairsOfRaw(exchange.upstreamHeaders(rawOf(request.headers)));
    const fail = (error: unknown): Response => {
      release();
      const answer: LocalAnswer | undefined = exchange.fail(
        timer.fired ? 'timeout' : request.signal.aborted ? 'client-closed' : 'unreachable',
        error,
      );
      return answer === undefined ? new Response(null, { status: 499 }) : toResponse(answer);
    };

    let upstream: Response;
    let text: string | undefined;
    timer.arm();
    exchange.sending();
    try {
      const init = { method: request.method, headers, redirect: 'manual' as const, signal: controller.signal };
      upstream = await send(exchange.url, body === undefined ? init : { ...init, body });
      if (exchange.mayHeal(upstream.status)) {
        const read = await readAnswerText(upstream, exchange.maxHealBytes);
        if ('response' in read) {
          upstream = read.response; // too large to be a pairing error: relayed as it comes
        } else {
          text = read.text;
          const retry = exchange.heal(upstream.status, text);
          if (retry !== undefined) {
            text = undefined;
            upstream = await send(exchange.url, { ...init, body: retry });
          }
        }
      }
    } catch (error) {
      return fail(error);
    }
    timer.disarm();
    exchange.answered(upstream.status);
    // A 400 read for the heal decision goes back as the text it was (decoded: no content-encoding/length).
    const responseHeaders = new Headers(
      pairsOfRaw(
        exchange.clientHeaders(rawOf(upstream.headers), text !== undefined || upstream.headers.has('content-encoding')),
      ),
    );
    const init = { status: upstream.status, statusText: upstream.statusText, headers: responseHeaders };
    if (text !== undefined) {
      release();
      exchange.finish('complete');
      return new Response(text, init);
    }
    const source = upstream.body;
    if (source === null || NO_BODY_STATUSES.has(upstream.status) || request.method === 'HEAD') {
      await source?.cancel().catch(() => undefined);
      release();
      exchange.finish('complete');
      return new Response(null, init);
    }

    // Pull one chunk from upstream only when the client asks for one (highWaterMark 0): the
    // response is never buffered here, and a slow client slows the upstream read, not our memory.
    const reader = source.getReader();
    const end = (outcome: Parameters<ProxyExchange['finish']>[0]): void => {
      release();
      exchange.finish(outcome);
    };
    const relay = new ReadableStream<Uint8Array>(
      {
        async pull(stream) {
          timer.arm();
          try {
            const { done, value } = await reader.read();
            timer.disarm();
            if (done) {
              end('complete');
              stream.close();
            } else {
              stream.enqueue(value);
            }
          } catch (error) {
            timer.disarm();
            end(timer.fired ? 'upstream-timeout' : request.signal.aborted ? 'client-closed' : 'upstream-error');
            stream.error(error);
          }
        },
        async cancel(reason) {
          end('client-closed');
          await reader.cancel(reason).catch(() => undefined);
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(relay, init);
  }

  return Object.assign(handle, { metrics: core.metrics });
}
