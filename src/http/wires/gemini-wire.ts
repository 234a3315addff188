import type { RepairOptions } from '../../core/index.js';
import { check, classifyError, repair } from '../../core/index.js';
import type { LocalAnswer } from '../openai-error-response.js';
import type { HttpWire, RepairSettings, SanitizedWireBody, WireBody } from './http-wire.js';
import { healsNamedRule, parseObject, pathnameOf, repairedRules } from './http-wire.js';

const PATH = /\/models\/[^/:]+:(?:generateContent|streamGenerateContent|countTokens)$/;

/**
 * Gemini `generateContent`: `POST …/models/{model}:generateContent`, `:streamGenerateContent`
 * (any query: `?alt=sse`, `?key=`) and `:countTokens` (its `contents`, or the `contents` of its
 * `generateContentRequest`). Repaired with the core's Gemini format
 * (`repair` with format 'gemini-contents'): response counts, turn positions, empty parts, each part's
 * `thoughtSignature` carried through. The key (`x-goog-api-key` or `?key=`) is forwarded as it
 * came and never reported: repair events name the URL with `key` redacted.
 */
export const geminiWire: HttpWire<'gemini'> = {
  name: 'gemini',
  matchesPath: (pathname) => PATH.test(pathname),
  matches(url) {
    const pathname = pathnameOf(url);
    return pathname !== undefined && PATH.test(pathname);
  },
  parse(text) {
    const body = parseObject(text);
    if (body === undefined) return undefined;
    if (Array.isArray(body['contents'])) return body;
    const inner = body['generateContentRequest'];
    return isRecord(inner) && Array.isArray(inner['contents']) ? body : undefined;
  },
  sanitize: (body, settings) => sanitize(body, settings),
  heal(sent, status, text, settings) {
    if (status !== 400) return undefined;
    const verdict = classifyError(status, text);
    if (verdict === undefined || verdict.provider !== 'gemini') return undefined;
    // The strongest repair of what was sent (which also drops a final model turn the path's model
    // does not take), sent only when that removes what the 400 named.
    const healed = sanitize(sent, settings, 'strongest');
    return healed.changed && healsNamedRule(healed.rules, verdict.rule)
      ? { ...healed, rejectedFor: verdict.rule }
      : undefined;
  },
  error: geminiError,
};

/** Google's error statuses by HTTP status (cloud.google.com/apis/design/errors, "HTTP mapping"). */
const STATUSES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** An error the proxy answers a Gemini client with, in Google's shape: {error: {code, message, status}}. */
export function geminiError(status: number, message: string): LocalAnswer {
  const body = { error: { code: status, message, status: STATUSES[status] ?? 'INTERNAL' } };
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** The model a request URL names: `…/models/{model}:generateContent` (the body has none). */
export function geminiModelOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const pathname = pathnameOf(url);
  const match = pathname === undefined ? null : MODEL.exec(pathname);
  if (match === null) return undefined;
  try {
    return decodeURIComponent(match[1] as string);
  } catch {
    return match[1];
  }
}

const MODEL = /\/models\/([^/:]+):[A-Za-z]+$/;

/** The one place this wire asks the core: repair `contents` (top level, or countTokens' inner request). */
function sanitize(
  body: WireBody,
  settings: RepairSettings,
  level: 'default' | 'strongest' = 'default',
): SanitizedWireBody {
  const inner = Array.isArray(body['contents']) ? body : (body['generateContentRequest'] as WireBody);
  const contents = inner['contents'] as unknown[];
  // The path's model decides whether a final model turn is a prefill or refused (gemini-model.ts in the core).
  const options: RepairOptions = { format: 'gemini-contents', level };
  const model = geminiModelOf(settings.url);
  if (model !== undefined) options.model = model;
  const policy = settings.policy;
  if (policy?.unanswered !== undefined) options.unanswered = policy.unanswered;
  if (policy?.orphans !== undefined) options.orphans = policy.orphans;
  const result = repair(contents, options);
  if (!result.changed) return { body, changed: false, changes: [], rules: [], remaining: result.remaining };
  const repaired = { ...inner, contents: result.messages };
  return {
    body: inner === body ? repaired : { ...body, generateContentRequest: repaired },
    changed: true,
    changes: result.changes,
    rules: repairedRules(check(contents, options), result.remaining),
    remaining: result.remaining,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
