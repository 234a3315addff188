import type { Profile, ProfileName, RuleId } from '../core/index.js';
import { createSanitizingFetch } from './create-sanitizing-fetch.js';
import { toClientHeaders, toUpstreamHeaders } from './forward-headers.js';
import { openAIErrorResponse } from './openai-error-response.js';
import type { ProxyMetrics } from './proxy-metrics.js';
import { createProxyMetrics } from './proxy-metrics.js';
import { readLimitedBody } from './read-limited-body.js';
import type { RepairPolicy } from './sanitize-chat-body.js';

/** One line per request, written when its response body has ended. Never holds headers; bodies only with `logBodies`. */
export interface ProxyLogEntry {
  id: string;
  method: string;
  path: string;
  status: number;
  /** Rules repaired in this request (before sending, and in the heal retry). */
  rules: RuleId[];
  healRetry: boolean;
  outcome: 'complete' | 'client-closed' | 'upstream-error' | 'upstream-timeout' | 'upstream-unreachable' | 'too-large' | 'local';
  requestBytes: number;
  /** From receiving the request to its response headers from upstream. */
  upstreamMs?: number;
  /** From receiving the request to the end of its response body. */
  durationMs: number;
  requestBody?: string;
}

export interface ProxyHandlerOptions {
  /** Base URL the proxy forwards to; the request path is appended to its path. */
  upstream: string;
  profile?: ProfileName | Profile;
  policy?: RepairPolicy;
  /** How to reach the upstream (default: the global fetch). */
  fetch?: typeof fetch;
  /** Requests with a larger body get a 413 (default 32 MiB). */
  maxBodyBytes?: number;
  /** How long the upstream may stay silent, before its headers or between two chunks (default 300 s). */
  upstreamTimeoutMs?: number;
  logBodies?: boolean;
  log?: (entry: ProxyLogEntry) => void;
  metrics?: ProxyMetrics;
}

/**
 * What the handler reads of a request: a fetch `Request` has all of it. The node adapter passes a
 * plain object of these fields instead, because constructing a `Request` costs more on Node 20 than
 * everything else the proxy does with a small request (docs/decisions/http-node-fetch.md).
 */
export type ProxyRequest = Pick<Request, 'method' | 'url' | 'headers' | 'body' | 'signal'>;

export type ProxyHandler = ((request: ProxyRequest) => Promise<Response>) & { readonly metrics: ProxyMetrics };

export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 300_000;

/**
 * The proxy as a function of a fetch `Request`: no socket, so it is tested in-process and any
 * server (node:http here, see `node-http-adapter.ts`) can carry it. Every failure becomes a response in
 * the OpenAI error shape; it never throws.
 */
export function createProxyHandler(options: ProxyHandlerOptions): ProxyHandler {
  const base = new URL(options.upstream);
  const prefix = base.pathname.replace(/\/+$/, '');
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const timeoutMs = options.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const metrics = options.metrics ?? createProxyMetrics();
  const send = options.fetch ?? ((input, init) => globalThis.fetch(input, init));

  async function handle(request: ProxyRequest): Promise<Response> {
    const started = performance.now();
    const url = new URL(request.url);
    const entry: ProxyLogEntry = { id: requestId(request), method: request.method, path: url.pathname, status: 0, rules: [], healRetry: false, outcome: 'local', requestBytes: 0, durationMs: 0 };
    const finish = (outcome: ProxyLogEntry['outcome']): void => {
      entry.outcome = outcome;
      entry.durationMs = round(performance.now() - started);
      try {
        options.log?.(entry);
      } catch {
        // A broken log sink must not break the proxy.
      }
    };
    const answer = (response: Response, outcome: ProxyLogEntry['outcome']): Response => {
      entry.status = response.status;
      metrics.countRequest(response.status);
      finish(outcome);
      return response;
    };

    if (request.method === 'GET' && url.pathname === '/healthz') return answer(Response.json({ status: 'ok' }), 'local');
    if (request.method === 'GET' && url.pathname === '/metrics') {
      return answer(new Response(metrics.render(), { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' } }), 'local');
    }

    let body: Uint8Array | undefined;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const declared = Number(request.headers.get('content-length') ?? '0');
      const read = declared > maxBodyBytes ? { ok: false as const, size: declared } : await readLimitedBody(request.body, maxBodyBytes);
      if (!read.ok) {
        entry.requestBytes = read.size;
        const message = `unstuck proxy: request body is larger than ${maxBodyBytes} bytes`;
        return answer(openAIErrorResponse(413, message, 'request_too_large', { connection: 'close' }), 'too-large');
      }
      body = read.bytes;
      entry.requestBytes = body.byteLength;
      if (options.logBodies === true) entry.requestBody = new TextDecoder().decode(body);
    }

    // One controller for the whole exchange: the client going away and a silent upstream both end it.
    const controller = new AbortController();
    const onClientGone = (): void => controller.abort(new Error('client closed the connection'));
    if (request.signal.aborted) onClientGone();
    request.signal.addEventListener('abort', onClientGone, { once: true });
    // One timer per request, restarted while we wait on the upstream and ignored while we wait on
    // the client (a slow reader is backpressure, not a silent upstream).
    let timedOut = false;
    let waiting = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = (): void => {
      waiting = true;
      if (timer === undefined) {
        timer = setTimeout(() => {
          if (!waiting) return;
          timedOut = true;
          controller.abort(new Error(`upstream silent for ${timeoutMs} ms`));
        }, timeoutMs);
        timer.unref(); // the server keeps the process alive, not a pending request's timer
      } else {
        timer.refresh();
      }
    };
    const disarm = (): void => {
      waiting = false;
    };
    const release = (): void => {
      waiting = false;
      clearTimeout(timer);
      request.signal.removeEventListener('abort', onClientGone);
    };

    const rules = new Set<RuleId>();
    const sanitizingFetch = createSanitizingFetch({
      fetch: send,
      ...(options.profile === undefined ? {} : { profile: options.profile }),
      ...(options.policy === undefined ? {} : { policy: options.policy }),
      onRepair(event) {
        for (const rule of event.rules) {
          if (!rules.has(rule)) metrics.countRepair(rule);
          rules.add(rule);
        }
        if (event.attempt === 'heal') {
          entry.healRetry = true;
          metrics.countHealRetry();
        }
      },
    });

    const target = `${base.origin}${prefix}${url.pathname}${url.search}`;
    let upstream: Response;
    arm();
    const sent = performance.now();
    try {
      upstream = await sanitizingFetch(target, {
        method: request.method,
        headers: toUpstreamHeaders(request.headers),
        ...(body === undefined ? {} : { body }),
        redirect: 'manual',
        signal: controller.signal,
      });
    } catch (error) {
      release();
      entry.rules = [...rules];
      if (timedOut) {
        metrics.countUpstreamFailure('timeout');
        return answer(openAIErrorResponse(504, `unstuck proxy: the upstream sent nothing for ${timeoutMs} ms`, 'upstream_timeout'), 'upstream-timeout');
      }
      if (request.signal.aborted) return answer(new Response(null, { status: 499 }), 'client-closed');
      metrics.countUpstreamFailure('unreachable');
      const message = `unstuck proxy: upstream ${base.origin} is unreachable (${describeCause(error)})`;
      return answer(openAIErrorResponse(502, message, 'upstream_unreachable'), 'upstream-unreachable');
    }
    disarm();
    entry.upstreamMs = round(performance.now() - started);
    metrics.observeUpstreamLatency((performance.now() - sent) / 1000);
    entry.rules = [...rules];
    entry.status = upstream.status;
    metrics.countRequest(upstream.status);

    const headers = toClientHeaders(upstream.headers);
    const source = upstream.body;
    if (source === null || [101, 204, 205, 304].includes(upstream.status) || request.method === 'HEAD') {
      await source?.cancel().catch(() => undefined);
      release();
      finish('complete');
      return new Response(null, { status: upstream.status, statusText: upstream.statusText, headers });
    }

    // Pull one chunk from upstream only when the client asks for one (highWaterMark 0): the
    // response is never buffered here, and a slow client slows the upstream read, not our memory.
    const reader = source.getReader();
    let ended = false;
    const end = (outcome: ProxyLogEntry['outcome']): void => {
      if (ended) return;
      ended = true;
      release();
      finish(outcome);
    };
    const relay = new ReadableStream<Uint8Array>(
      {
        async pull(stream) {
          arm();
          try {
            const { done, value } = await reader.read();
            disarm();
            if (done) {
              end('complete');
              stream.close();
            } else {
              stream.enqueue(value);
            }
          } catch (error) {
            disarm();
            metrics.countUpstreamFailure(timedOut ? 'timeout' : 'stream-error');
            end(timedOut ? 'upstream-timeout' : request.signal.aborted ? 'client-closed' : 'upstream-error');
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
    return new Response(relay, { status: upstream.status, statusText: upstream.statusText, headers });
  }

  return Object.assign(handle, { metrics });
}

/** A client's own request id when it looks like one (never copied into logs unchecked), else a new one. */
function requestId(request: ProxyRequest): string {
  const given = request.headers.get('x-request-id');
  return given !== null && /^[\w.-]{1,64}$/.test(given) ? given : crypto.randomUUID();
}

function describeCause(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
