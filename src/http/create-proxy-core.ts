import type { Profile, ProfileName, RuleId } from '../core/index.js';
import type { RawHeaders } from './forward-headers.js';
import { clientRawHeaders, upstreamRawHeaders } from './forward-headers.js';
import { healChatBody } from './heal-chat-body.js';
import type { LocalAnswer } from './openai-error-response.js';
import { openAIError } from './openai-error-response.js';
import type { ProxyMetrics } from './proxy-metrics.js';
import { createProxyMetrics } from './proxy-metrics.js';
import { targetOf } from './request-target.js';
import type { RepairPolicy } from './sanitize-chat-body.js';
import { parseChatBody, sanitizeChatBody } from './sanitize-chat-body.js';

/** One line per request, written when its response body has ended. Never holds headers; bodies only with `logBodies`. */
export interface ProxyLogEntry {
  id: string;
  method: string;
  path: string;
  status: number;
  /** Rules repaired in this request (before sending, and in the heal retry). */
  rules: RuleId[];
  healRetry: boolean;
  outcome:
    | 'complete'
    | 'client-closed'
    | 'upstream-error'
    | 'upstream-timeout'
    | 'upstream-unreachable'
    | 'too-large'
    | 'local';
  requestBytes: number;
  /** What went wrong inside the proxy, when something did: an error's name and message, never a body or a header value. */
  error?: string;
  /** From receiving the request to its response headers from upstream. */
  upstreamMs?: number;
  /** From receiving the request to the end of its response body. */
  durationMs: number;
  requestBody?: string;
}

export interface ProxyOptions {
  /** Base URL the proxy forwards to; the request path is appended to its path. */
  upstream: string;
  profile?: ProfileName | Profile;
  policy?: RepairPolicy;
  /** Requests with a larger body get a 413 (default 32 MiB). */
  maxBodyBytes?: number;
  /** How long the upstream may stay silent, before its headers or between two chunks (default 300 s). */
  upstreamTimeoutMs?: number;
  logBodies?: boolean;
  log?: (entry: ProxyLogEntry) => void;
  metrics?: ProxyMetrics;
}

export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 300_000;
/** The most of one upstream answer read whole for the heal decision (see `ProxyExchange.maxHealBytes`). */
export const MAX_HEAL_BODY_BYTES = 1024 * 1024;

/**
 * Every decision of one proxied request, with no I/O: the handler (fetch objects) and the native
 * node:http server (node streams) each carry bytes between client and upstream and ask this what
 * to do, so the two cannot answer differently. Its methods are called in this order: `local`
 * (answered here?), `tooLarge`, `prepare` (the body to send), `sending`, then `heal` on a 400 (at
 * most one retry), `answered` when upstream headers arrive, and one of `finish` / `fail` /
 * `answer` at the end, which write the log line and count the metrics once.
 */
export interface ProxyExchange {
  readonly entry: ProxyLogEntry;
  /** `/healthz` and `/metrics` are answered by the proxy, never forwarded. */
  readonly local: LocalAnswer | undefined;
  /** Whether the request carries a body (not GET/HEAD). */
  readonly readsBody: boolean;
  /** The upstream URL: the request's path and query under the upstream base path. */
  readonly url: string;
  /** The same without the origin (what an http.request to `ProxyCore.upstream` asks for). */
  readonly upstreamPath: string;
  readonly maxBodyBytes: number;
  readonly timeoutMs: number;
  /**
   * How much of an answer `mayHeal` asks for may be read whole (raw, and decoded when compressed).
   * A provider's pairing error is a few hundred bytes; a larger answer cannot be one and is relayed
   * as it comes, like any other, so no upstream makes the proxy hold more than this per request.
   */
  readonly maxHealBytes: number;
  /** The 413 for a body (declared or read) over the limit; ends the exchange. */
  tooLarge(size: number): LocalAnswer;
  /** The body to send: the same bytes when nothing needs repair, the repaired JSON otherwise. */
  prepare(bytes: Uint8Array | undefined): Uint8Array | undefined;
  /** Raw headers (name, value, …) in, raw headers out: node's `rawHeaders` shape. */
  upstreamHeaders(raw: RawHeaders): string[];
  /** The request is leaving for the upstream now (starts the upstream latency). */
  sending(): void;
  /** Whether an upstream answer with this status must be read whole, for `heal` to decide on it. */
  mayHeal(status: number): boolean;
  /** On an upstream answer with its body read as text: the body of the one heal retry, or undefined (send the answer back). */
  heal(status: number, text: string): Uint8Array | undefined;
  /** Upstream response headers arrived with this status. */
  answered(status: number): void;
  clientHeaders(raw: RawHeaders, decoded: boolean): string[];
  /** The upstream could not answer: the 504/502 to send (or, when the client left, nothing to send). */
  fail(kind: 'timeout' | 'unreachable' | 'client-closed', error?: unknown): LocalAnswer | undefined;
  /** A local answer was sent (health, metrics). */
  answer(answer: LocalAnswer): void;
  /** An error escaped a carrier's code while relaying this exchange: it goes in the log line (the carrier then fails the exchange). */
  noteError(error: unknown): void;
  /** The relayed response ended: complete, cut by the upstream (a reset, a timeout) or by the client leaving. */
  finish(outcome: 'complete' | 'client-closed' | 'upstream-error' | 'upstream-timeout'): void;
}

export interface ProxyCore {
  readonly metrics: ProxyMetrics;
  /** Where requests go: the upstream's protocol, host and port (its base path is in each exchange's `upstreamPath`). */
  readonly upstream: { protocol: string; hostname: string; port: string };
  /** `url` is absolute (adapters build it on their own origin); `requestId` is the client's x-request-id, if any. */
  begin(method: string, url: string, requestId: string | null | undefined): ProxyExchange;
}

const METRICS_HEADERS = { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' };
const JSON_HEADERS = { 'content-type': 'application/json' };
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const CHAT_PATH = /\/chat\/completions\/?$/; // as isChatCompletionsPath, on a pathname already parsed

interface Settings {
  readonly origin: string;
  readonly basePath: string;
  readonly maxBodyBytes: number;
  readonly timeoutMs: number;
  readonly metrics: ProxyMetrics;
  readonly repair: { profile: ProfileName | Profile | undefined; policy: RepairPolicy | undefined };
  readonly logBodies: boolean;
  readonly log: ((entry: ProxyLogEntry) => void) | undefined;
}

export function createProxyCore(options: ProxyOptions): ProxyCore {
  const base = new URL(options.upstream);
  const settings: Settings = {
    origin: base.origin,
    basePath: base.pathname.replace(/\/+$/, ''),
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    timeoutMs: options.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS,
    metrics: options.metrics ?? createProxyMetrics(),
    repair: { profile: options.profile, policy: options.policy },
    logBodies: options.logBodies === true,
    log: options.log,
  };
  return {
    metrics: settings.metrics,
    upstream: { protocol: base.protocol, hostname: base.hostname, port: base.port },
    begin: (method, url, requestId) => new Exchange(settings, method, url, requestId),
  };
}

/** A class rather than closures: one object per request, its methods shared (the proxy's hot path). */
class Exchange implements ProxyExchange {
  readonly entry: ProxyLogEntry;
  readonly local: LocalAnswer | undefined;
  readonly readsBody: boolean;
  readonly url: string;
  readonly upstreamPath: string;
  readonly maxBodyBytes: number;
  readonly timeoutMs: number;
  readonly maxHealBytes = MAX_HEAL_BODY_BYTES;
  readonly #settings: Settings;
  readonly #started = performance.now();
  readonly #isChat: boolean;
  /** The chat body as last sent (bytes, not the parsed object: a heal is rare, holding objects per request is not free). */
  #sent: Uint8Array | undefined;
  #healed = false;
  #sentAt = 0;
  #ended = false;

  constructor(settings: Settings, method: string, href: string, requestId: string | null | undefined) {
    this.#settings = settings;
    const [pathname, search] = targetOf(href); // throws on a target that is no URL: the adapter answers 400
    this.entry = {
      id: idOf(requestId),
      method,
      path: pathname,
      status: 0,
      rules: [],
      healRetry: false,
      outcome: 'local',
      requestBytes: 0,
      durationMs: 0,
    };
    this.#isChat = method === 'POST' && CHAT_PATH.test(pathname);
    this.readsBody = method !== 'GET' && method !== 'HEAD';
    this.upstreamPath = `${settings.basePath}${pathname}${search}`;
    this.url = `${settings.origin}${this.upstreamPath}`;
    this.maxBodyBytes = settings.maxBodyBytes;
    this.timeoutMs = settings.timeoutMs;
    if (method === 'GET' && pathname === '/healthz')
      this.local = { status: 200, headers: JSON_HEADERS, body: '{"status":"ok"}' };
    else if (method === 'GET' && pathname === '/metrics')
      this.local = { status: 200, headers: METRICS_HEADERS, body: settings.metrics.render() };
  }

  tooLarge(size: number): LocalAnswer {
    this.entry.requestBytes = size;
    return this.#reply(
      openAIError(413, `unstuck proxy: request body is larger than ${this.maxBodyBytes} bytes`, 'request_too_large'),
      'too-large',
    );
  }

  prepare(bytes: Uint8Array | undefined): Uint8Array | undefined {
    if (bytes === undefined) return undefined;
    this.entry.requestBytes = bytes.byteLength;
    const text = this.#settings.logBodies || this.#isChat ? decoder.decode(bytes) : undefined;
    if (this.#settings.logBodies && text !== undefined) this.entry.requestBody = text;
    if (!this.#isChat || text === undefined) return bytes;
    const body = parseChatBody(text);
    if (body === undefined) return bytes;
    const result = sanitizeChatBody(body, this.#settings.repair);
    this.#sent = result.changed ? encoder.encode(JSON.stringify(result.body)) : bytes;
    if (result.changed) this.#repaired(result.rules);
    return this.#sent;
  }

  upstreamHeaders(raw: RawHeaders): string[] {
    return upstreamRawHeaders(raw);
  }

  sending(): void {
    this.#sentAt = performance.now();
  }

  mayHeal(status: number): boolean {
    return status === 400 && !this.#healed && this.#sent !== undefined;
  }

  heal(status: number, text: string): Uint8Array | undefined {
    if (!this.mayHeal(status)) return undefined;
    const sent = parseChatBody(decoder.decode(this.#sent));
    const result = sent === undefined ? undefined : healChatBody(sent, status, text, this.#settings.repair);
    if (result === undefined) return undefined;
    this.#healed = true;
    this.entry.healRetry = true;
    this.#settings.metrics.countHealRetry();
    this.#repaired(result.rules);
    this.#sent = encoder.encode(JSON.stringify(result.body));
    return this.#sent;
  }

  answered(status: number): void {
    const now = performance.now();
    this.entry.upstreamMs = round(now - this.#started);
    this.#settings.metrics.observeUpstreamLatency((now - this.#sentAt) / 1000);
    this.entry.status = status;
    this.#settings.metrics.countRequest(status);
  }

  clientHeaders(raw: RawHeaders, decoded: boolean): string[] {
    return clientRawHeaders(raw, decoded);
  }

  fail(kind: 'timeout' | 'unreachable' | 'client-closed', error?: unknown): LocalAnswer | undefined {
    const metrics = this.#settings.metrics;
    if (kind === 'client-closed') {
      if (this.#ended) return undefined;
      this.entry.status = 499;
      metrics.countRequest(499);
      this.#end('client-closed');
      return undefined;
    }
    if (kind === 'timeout') {
      metrics.countUpstreamFailure('timeout');
      return this.#reply(
        openAIError(504, `unstuck proxy: the upstream sent nothing for ${this.timeoutMs} ms`, 'upstream_timeout'),
        'upstream-timeout',
      );
    }
    metrics.countUpstreamFailure('unreachable');
    return this.#reply(
      openAIError(
        502,
        `unstuck proxy: upstream ${this.#settings.origin} is unreachable (${describeCause(error)})`,
        'upstream_unreachable',
      ),
      'upstream-unreachable',
    );
  }

  answer(answer: LocalAnswer): void {
    this.#reply(answer, 'local');
  }

  noteError(error: unknown): void {
    if (this.entry.error !== undefined) return;
    const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    this.entry.error = text.split('\n')[0]?.slice(0, 200) ?? '';
  }

  finish(outcome: 'complete' | 'client-closed' | 'upstream-error' | 'upstream-timeout'): void {
    if (this.#ended) return;
    if (outcome === 'upstream-timeout') this.#settings.metrics.countUpstreamFailure('timeout');
    if (outcome === 'upstream-error') this.#settings.metrics.countUpstreamFailure('stream-error');
    this.#end(outcome);
  }

  #repaired(found: readonly RuleId[]): void {
    for (const rule of found) {
      if (this.entry.rules.includes(rule)) continue;
      this.#settings.metrics.countRepair(rule);
      this.entry.rules.push(rule);
    }
  }

  #reply(answer: LocalAnswer, outcome: ProxyLogEntry['outcome']): LocalAnswer {
    this.entry.status = answer.status;
    this.#settings.metrics.countRequest(answer.status);
    this.#end(outcome);
    return answer;
  }

  #end(outcome: ProxyLogEntry['outcome']): void {
    if (this.#ended) return;
    this.#ended = true;
    this.entry.outcome = outcome;
    this.entry.durationMs = round(performance.now() - this.#started);
    try {
      this.#settings.log?.(this.entry);
    } catch {
      // A broken log sink must not break the proxy.
    }
  }
}

/** Request ids this process makes: unique per process start, cheaper than a UUID per request. */
const ID_PREFIX = crypto.randomUUID().slice(0, 8);
let lastId = 0;

/** A client's own request id when it looks like one (never copied into logs unchecked), else a new one. */
function idOf(given: string | null | undefined): string {
  if (given !== null && given !== undefined && /^[\w.-]{1,64}$/.test(given)) return given;
  lastId += 1;
  return `${ID_PREFIX}-${lastId.toString(36)}`;
}

function describeCause(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.message : String(error);
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
