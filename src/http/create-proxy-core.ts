import { timingSafeEqual } from 'node:crypto';
import type { Change, Profile, ProfileName, Remaining, RuleId } from '../core/index.js';
import type { RawHeaders } from './forward-headers.js';
import { clientRawHeaders, upstreamRawHeaders } from './forward-headers.js';
import type { LocalAnswer } from './openai-error-response.js';
import { openAIError } from './openai-error-response.js';
import type { ProxyMetrics } from './proxy-metrics.js';
import { createProxyMetrics } from './proxy-metrics.js';
import { redactSecrets, redactTarget } from './redact-secrets.js';
import { targetOf } from './request-target.js';
import type { RepairPolicy } from './sanitize-chat-body.js';
import type { HttpWire, RepairSettings, WireBody, WireName } from './wires/http-wire.js';
import { wireOfPath } from './wires/wire-table.js';

/** One line per request, written when its response body has ended. Never holds headers; bodies only with `logBodies`. */
export interface ProxyLogEntry {
  id: string;
  method: string;
  /** The request's path and query, with the value of every query parameter that may hold a key (`key=`…) redacted. */
  path: string;
  /** The wire the path belongs to, when one does (chat, anthropic…). */
  wire?: WireName | undefined;
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

/**
 * One repair of a proxied request, with the body before and after it (`ProxyOptions.onRepair`):
 * what a report of the run shows. Never holds a header; `path` is the logged one (token stripped,
 * key-like query values redacted). The bodies are the proxy's own objects: read them, keep them,
 * never change them.
 */
export interface ProxyRepairEvent {
  /** The log entry's id (`ProxyLogEntry.id`). */
  id: string;
  path: string;
  wire: WireName;
  /** `heal`: the one retry after the provider's 400, repairing the body as it was sent. */
  attempt: 'request' | 'heal';
  before: WireBody;
  after: WireBody;
  changes: Change[];
  rules: RuleId[];
  remaining: Remaining[];
  /** For a heal: the provider's 400 as it came (secrets redacted, at most 4000 characters) and the rule it names. */
  providerError?: string;
  rejectedFor?: RuleId;
}

export interface ProxyOptions {
  /**
   * Base URL the proxy forwards to; the request path is appended to its path. Every request goes
   * here that `routes` does not send elsewhere; without it, such a request gets a 404.
   */
  upstream?: string;
  /** A base URL per wire, for one proxy in front of several providers (e.g. `{ anthropic: …, chat: … }`). */
  routes?: Partial<Record<WireName, string>>;
  profile?: ProfileName | Profile;
  policy?: RepairPolicy;
  /** Requests with a larger body get a 413 (default 32 MiB). */
  maxBodyBytes?: number;
  /** How long the upstream may stay silent, before its headers or between two chunks (default 300 s). */
  upstreamTimeoutMs?: number;
  logBodies?: boolean;
  log?: (entry: ProxyLogEntry) => void;
  /** Called after every repair that changed a request (before it is sent). Must not throw; never called when unset. */
  onRepair?: (event: ProxyRepairEvent) => void;
  metrics?: ProxyMetrics;
  /**
   * A secret every request must carry as its path's first segments, `/t/<token>/…` (stripped before
   * the request is routed and forwarded; never logged). A request without it gets a 403 in its wire's
   * error shape and never reaches the upstream, `/healthz` and `/metrics` included. `unstuck run` sets
   * it so that only the agent it started, which alone was given the base URL, can use its proxy.
   */
  pathToken?: string;
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
  /** The local answer is `/metrics`: its body is empty here, and the carrier sends `metrics.collect()` as the body. */
  readonly isMetrics: boolean;
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
  /**
   * True when every route shares `upstream`'s origin, so a carrier with one connection pool to it
   * (the native server) can carry every exchange; with routes to several origins it cannot.
   */
  readonly singleOrigin: boolean;
  /** `url` is absolute (adapters build it on their own origin); `requestId` is the client's x-request-id, if any. */
  begin(method: string, url: string, requestId: string | null | undefined): ProxyExchange;
}

const JSON_HEADERS = { 'content-type': 'application/json' };
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Where one group of requests goes: an upstream's origin and the base path their paths are appended to. */
interface Route {
  readonly origin: string;
  readonly basePath: string;
}

interface Settings {
  /** The route of every request whose wire has none of its own (undefined: such a request gets a 404). */
  readonly fallback: Route | undefined;
  readonly routes: ReadonlyMap<WireName, Route>;
  readonly maxBodyBytes: number;
  readonly timeoutMs: number;
  readonly metrics: ProxyMetrics;
  readonly repair: { profile: ProfileName | Profile | undefined; policy: RepairPolicy | undefined };
  readonly logBodies: boolean;
  readonly log: ((entry: ProxyLogEntry) => void) | undefined;
  readonly onRepair: ((event: ProxyRepairEvent) => void) | undefined;
  readonly pathToken: Buffer | undefined;
}

function routeOf(upstream: string): Route & { url: URL } {
  const url = new URL(upstream);
  return { url, origin: url.origin, basePath: url.pathname.replace(/\/+$/, '') };
}

export function createProxyCore(options: ProxyOptions): ProxyCore {
  const fallback = options.upstream === undefined ? undefined : routeOf(options.upstream);
  const routes = new Map<WireName, Route & { url: URL }>();
  for (const [wire, upstream] of Object.entries(options.routes ?? {}) as [WireName, string | undefined][])
    if (upstream !== undefined) routes.set(wire, routeOf(upstream));
  const base = (fallback ?? [...routes.values()][0])?.url;
  if (base === undefined) throw new TypeError('createProxyCore: give an upstream or at least one route');
  const settings: Settings = {
    fallback,
    routes,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    timeoutMs: options.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS,
    metrics: options.metrics ?? createProxyMetrics(),
    repair: { profile: options.profile, policy: options.policy },
    logBodies: options.logBodies === true,
    log: options.log,
    onRepair: options.onRepair,
    pathToken: tokenOf(options.pathToken),
  };
  return {
    metrics: settings.metrics,
    upstream: { protocol: base.protocol, hostname: base.hostname, port: base.port },
    singleOrigin: [...routes.values()].every((route) => route.origin === base.origin),
    begin: (method, url, requestId) => new Exchange(settings, method, url, requestId),
  };
}

/** A class rather than closures: one object per request, its methods shared (the proxy's hot path). */
class Exchange implements ProxyExchange {
  readonly entry: ProxyLogEntry;
  readonly local: LocalAnswer | undefined;
  readonly isMetrics: boolean;
  readonly readsBody: boolean;
  readonly url: string;
  readonly upstreamPath: string;
  readonly maxBodyBytes: number;
  readonly timeoutMs: number;
  readonly maxHealBytes = MAX_HEAL_BODY_BYTES;
  readonly #settings: Settings;
  readonly #started = performance.now();
  /** The wire whose path this is (its upstream, its error shape, its metrics label). */
  readonly #wire: HttpWire | undefined;
  /** The wire that repairs this request: the path's wire, for a POST. */
  readonly #repairs: HttpWire | undefined;
  readonly #label: string;
  readonly #origin: string;
  /** The body as last sent (bytes, not the parsed object: a heal is rare, holding objects per request is not free). */
  #sent: Uint8Array | undefined;
  #healed = false;
  #sentAt = 0;
  #ended = false;

  constructor(settings: Settings, method: string, href: string, requestId: string | null | undefined) {
    this.#settings = settings;
    const [target, search] = targetOf(href); // throws on a target that is no URL: the adapter answers 400
    const [pathname, logged, admitted] =
      settings.pathToken === undefined ? [target, target, true] : admit(target, settings.pathToken);
    this.#wire = wireOfPath(pathname);
    this.#repairs = method === 'POST' ? this.#wire : undefined;
    this.#label = this.#wire?.name ?? 'other';
    this.entry = {
      id: idOf(requestId),
      method,
      // The token is not logged: an admitted request logs the path after it, a refused one `/t/[redacted]/…`.
      path: search === '' ? logged : redactTarget(logged, search),
      wire: this.#wire?.name, // always present (undefined is left out of the line): one object shape for every entry
      status: 0,
      rules: [],
      healRetry: false,
      outcome: 'local',
      requestBytes: 0,
      durationMs: 0,
    };
    this.readsBody = method !== 'GET' && method !== 'HEAD';
    const route = (this.#wire === undefined ? undefined : settings.routes.get(this.#wire.name)) ?? settings.fallback;
    this.#origin = route?.origin ?? '';
    this.upstreamPath = `${route?.basePath ?? ''}${pathname}${search}`;
    this.url = `${this.#origin}${this.upstreamPath}`;
    this.maxBodyBytes = settings.maxBodyBytes;
    this.timeoutMs = settings.timeoutMs;
    this.isMetrics = admitted && method === 'GET' && pathname === '/metrics';
    const refused = admitted ? this.#wire?.answersLocally?.(method, pathname) : undefined;
    if (!admitted)
      this.local = this.#error(403, 'unstuck proxy: this proxy serves only the clients given its token', 'forbidden');
    else if (refused !== undefined) this.local = this.#error(refused.status, refused.message, refused.code);
    else if (method === 'GET' && pathname === '/healthz')
      this.local = { status: 200, headers: JSON_HEADERS, body: '{"status":"ok"}' };
    else if (this.isMetrics)
      this.local = {
        status: 200,
        headers: { 'content-type': settings.metrics.contentType },
        body: '',
      };
    else if (route === undefined)
      this.local = this.#error(
        404,
        `unstuck proxy: no upstream for ${this.#wire === undefined ? 'this path' : `the ${this.#wire.name} wire`} (start it with --upstream URL or --upstream ${this.#wire?.name ?? 'WIRE'}=URL)`,
        'no_upstream',
      );
  }

  tooLarge(size: number): LocalAnswer {
    this.entry.requestBytes = size;
    return this.#reply(
      this.#error(413, `unstuck proxy: request body is larger than ${this.maxBodyBytes} bytes`, 'request_too_large'),
      'too-large',
    );
  }

  prepare(bytes: Uint8Array | undefined): Uint8Array | undefined {
    if (bytes === undefined) return undefined;
    this.entry.requestBytes = bytes.byteLength;
    const wire = this.#repairs;
    const text = this.#settings.logBodies || wire !== undefined ? decoder.decode(bytes) : undefined;
    if (this.#settings.logBodies && text !== undefined) this.entry.requestBody = text;
    if (wire === undefined || text === undefined) return bytes;
    const body = wire.parse(text);
    if (body === undefined) return bytes; // not JSON, or not the shape the path implies: the upstream answers it
    const result = wire.sanitize(body, this.#repairSettings());
    this.#sent = result.changed ? encoder.encode(JSON.stringify(result.body)) : bytes;
    if (result.changed) {
      this.#repaired(result.rules);
      if (this.#settings.onRepair !== undefined) this.#report('request', wire, body, result);
    }
    return this.#sent;
  }

  /** The proxy's repair settings and where this request goes (a wire may read its model or its endpoint there). */
  #repairSettings(): RepairSettings {
    return { ...this.#settings.repair, url: this.url };
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
    const wire = this.#repairs;
    if (!this.mayHeal(status) || wire === undefined) return undefined;
    const sent: WireBody | undefined = wire.parse(decoder.decode(this.#sent));
    const result = sent === undefined ? undefined : wire.heal(sent, status, text, this.#repairSettings());
    if (result === undefined) return undefined;
    this.#healed = true;
    this.entry.healRetry = true;
    this.#settings.metrics.countHealRetry(this.#label);
    this.#repaired(result.rules);
    if (this.#settings.onRepair !== undefined && sent !== undefined)
      this.#report('heal', wire, sent, result, redactSecrets(text.slice(0, 4000)), result.rejectedFor);
    this.#sent = encoder.encode(JSON.stringify(result.body));
    return this.#sent;
  }

  answered(status: number): void {
    const now = performance.now();
    this.entry.upstreamMs = round(now - this.#started);
    this.#settings.metrics.observeUpstreamLatency((now - this.#sentAt) / 1000, this.#label);
    this.entry.status = status;
    this.#settings.metrics.countRequest(status, this.#label);
  }

  clientHeaders(raw: RawHeaders, decoded: boolean): string[] {
    return clientRawHeaders(raw, decoded);
  }

  fail(kind: 'timeout' | 'unreachable' | 'client-closed', error?: unknown): LocalAnswer | undefined {
    const metrics = this.#settings.metrics;
    if (kind === 'client-closed') {
      if (this.#ended) return undefined;
      this.entry.status = 499;
      metrics.countRequest(499, this.#label);
      this.#end('client-closed');
      return undefined;
    }
    if (kind === 'timeout') {
      metrics.countUpstreamFailure('timeout', this.#label);
      return this.#reply(
        this.#error(504, `unstuck proxy: the upstream sent nothing for ${this.timeoutMs} ms`, 'upstream_timeout'),
        'upstream-timeout',
      );
    }
    metrics.countUpstreamFailure('unreachable', this.#label);
    return this.#reply(
      this.#error(
        502,
        `unstuck proxy: upstream ${this.#origin} is unreachable (${redactSecrets(describeCause(error))})`,
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
    this.entry.error = redactSecrets(text.split('\n')[0] ?? '').slice(0, 200);
  }

  finish(outcome: 'complete' | 'client-closed' | 'upstream-error' | 'upstream-timeout'): void {
    if (this.#ended) return;
    if (outcome === 'upstream-timeout') this.#settings.metrics.countUpstreamFailure('timeout', this.#label);
    if (outcome === 'upstream-error') this.#settings.metrics.countUpstreamFailure('stream-error', this.#label);
    this.#end(outcome);
  }

  #repaired(found: readonly RuleId[]): void {
    for (const rule of found) {
      if (this.entry.rules.includes(rule)) continue;
      this.#settings.metrics.countRepair(rule, this.#label);
      this.entry.rules.push(rule);
    }
  }

  #report(
    attempt: ProxyRepairEvent['attempt'],
    wire: HttpWire,
    before: WireBody,
    result: { body: WireBody; changes: Change[]; rules: RuleId[]; remaining: Remaining[] },
    providerError?: string,
    rejectedFor?: RuleId,
  ): void {
    const event: ProxyRepairEvent = {
      id: this.entry.id,
      path: this.entry.path,
      wire: wire.name,
      attempt,
      before,
      after: result.body,
      changes: result.changes,
      rules: result.rules,
      remaining: result.remaining,
    };
    if (providerError !== undefined) event.providerError = providerError;
    if (rejectedFor !== undefined) event.rejectedFor = rejectedFor;
    try {
      this.#settings.onRepair?.(event);
    } catch {
      // A broken observer must not break the proxy.
    }
  }

  /** An error the proxy answers itself, in the shape the wire's clients parse (OpenAI's for any other path). */
  #error(status: number, message: string, code: string): LocalAnswer {
    return this.#wire === undefined ? openAIError(status, message, code) : this.#wire.error(status, message, code);
  }

  #reply(answer: LocalAnswer, outcome: ProxyLogEntry['outcome']): LocalAnswer {
    this.entry.status = answer.status;
    this.#settings.metrics.countRequest(answer.status, this.#label);
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

const TOKEN_PREFIX = '/t/';

function tokenOf(token: string | undefined): Buffer | undefined {
  if (token === undefined) return undefined;
  if (!/^[\w-]{16,}$/.test(token))
    throw new TypeError('createProxyCore: pathToken must be 16 or more URL-safe characters');
  return Buffer.from(token);
}

/**
 * Splits `/t/<token>/rest` into `/rest` (routed, and told by its wire), the path to log, and whether
 * the token is the proxy's (compared in constant time). A path without a token segment is refused
 * as it is; a wrong token is refused and logged with the segment redacted.
 */
function admit(pathname: string, token: Buffer): [string, string, boolean] {
  if (!pathname.startsWith(TOKEN_PREFIX)) return [pathname, pathname, false];
  const end = pathname.indexOf('/', TOKEN_PREFIX.length);
  const given = Buffer.from(pathname.slice(TOKEN_PREFIX.length, end === -1 ? undefined : end));
  const rest = end === -1 ? '/' : pathname.slice(end);
  const matches = given.length === token.length && timingSafeEqual(given, token);
  return matches ? [rest, rest, true] : [rest, `${TOKEN_PREFIX}[redacted]${rest === '/' ? '' : rest}`, false];
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
