/**
 * Why one model request failed, sorted once at the boundary so the retry policy reads a kind,
 * never an exception's text.
 */
export type WireFailure =
  | { kind: 'http'; status: number; body: unknown; retryAfterMs?: number }
  /** `permanent`: the request cannot succeed as addressed (bad port, invalid URL, unknown host), so it is not retried. */
  | { kind: 'network'; detail: string; permanent?: boolean }
  | { kind: 'timeout'; detail: string }
  | { kind: 'protocol'; detail: string }
  | { kind: 'aborted' };

export class WireError extends Error {
  readonly failure: WireFailure;
  constructor(failure: WireFailure) {
    super(describeFailure(failure));
    this.name = 'WireError';
    this.failure = failure;
  }
}

/** Transient: worth the same request again after a pause. */
export function isTransient(failure: WireFailure): boolean {
  if (failure.kind === 'network') return failure.permanent !== true;
  if (failure.kind === 'timeout') return true;
  if (failure.kind !== 'http') return false;
  return failure.status === 408 || failure.status === 409 || failure.status === 429 || failure.status >= 500;
}

export function describeFailure(failure: WireFailure): string {
  switch (failure.kind) {
    case 'http':
      return `HTTP ${failure.status}: ${errorText(failure.body)}`;
    case 'network':
      return `network failure: ${failure.detail}`;
    case 'timeout':
      return `no answer: ${failure.detail}`;
    case 'protocol':
      return `unreadable answer: ${failure.detail}`;
    case 'aborted':
      return 'aborted';
  }
}

/**
 * A connection failure that no retry can mend: a port fetch refuses to use ("bad port", the Fetch
 * standard's list), a URL that does not parse, a host name that does not exist (ENOTFOUND; a lookup
 * that merely failed, EAI_AGAIN, stays transient), or a refusal on port 0. Looks through `cause`
 * chains, and at a `permanent` flag a wrapping fetch may set.
 */
export function isPermanentConnectFailure(error: unknown, url: string): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== null && typeof current === 'object'; depth += 1) {
    const record = current as { permanent?: unknown; code?: unknown; message?: unknown; cause?: unknown };
    if (record.permanent === true) return true;
    if (record.code === 'ENOTFOUND' || record.code === 'ERR_INVALID_URL') return true;
    if (record.message === 'bad port') return true;
    if (record.code === 'ECONNREFUSED' && portOf(url) === '0') return true;
    current = record.cause;
  }
  return false;
}

function portOf(url: string): string | undefined {
  try {
    return new URL(url).port;
  } catch {
    return undefined;
  }
}

/** The provider's error message out of its error body (`{error: {message}}`, `{message}`, or text). */
export function errorText(body: unknown): string {
  if (typeof body === 'string') return body.slice(0, 500);
  if (body !== null && typeof body === 'object') {
    const record = body as { error?: unknown; message?: unknown };
    if (typeof record.error === 'string') return record.error;
    if (
      record.error !== null &&
      typeof record.error === 'object' &&
      typeof (record.error as { message?: unknown }).message === 'string'
    ) {
      return (record.error as { message: string }).message;
    }
    if (typeof record.message === 'string') return record.message;
  }
  return JSON.stringify(body)?.slice(0, 500) ?? 'no body';
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
