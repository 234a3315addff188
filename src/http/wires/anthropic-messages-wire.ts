import type { RepairOptions } from '../../core/index.js';
import { check, classifyError, repair } from '../../core/index.js';
import type { LocalAnswer } from '../openai-error-response.js';
import type { HttpWire, RepairSettings, SanitizedWireBody, WireBody } from './http-wire.js';
import { parseObject, pathnameOf, repairedRules } from './http-wire.js';

/** Only Anthropic's own paths: `/v1/threads/…/messages` (OpenAI's Assistants) is not this wire. */
const MESSAGES_PATH = /\/v1\/messages(?:\/count_tokens)?\/?$/;

/**
 * Anthropic Messages: `POST …/v1/messages` and `…/v1/messages/count_tokens`, whatever the base
 * path and query (Claude Code sends `?beta=true`). Repaired with the core's Anthropic format
 * (`repair` with format 'anthropic-messages'); thinking is on for `thinking: {type: "enabled"}` and
 * `{type: "adaptive"}`, so the current tool loop's signed thinking block is required and kept.
 */
export const anthropicMessagesWire: HttpWire<'anthropic'> = {
  name: 'anthropic',
  matchesPath: (pathname) => MESSAGES_PATH.test(pathname),
  matches(url) {
    const pathname = pathnameOf(url);
    return pathname !== undefined && MESSAGES_PATH.test(pathname);
  },
  parse(text) {
    const body = parseObject(text);
    return body !== undefined && Array.isArray(body['messages']) ? body : undefined;
  },
  sanitize: (body, settings) => sanitize(body, settings.policy),
  heal(sent, status, text, settings) {
    if (status !== 400) return undefined;
    const verdict = classifyError(status, text);
    if (verdict === undefined || !verdict.provider.includes('anthropic')) return undefined;
    // The request was repaired before it went out: a retry helps only if the repair, given the
    // rule the provider named, still finds something to change (it never invents what only
    // Anthropic can issue, such as a thinking signature).
    const healed = sanitize(sent, settings.policy);
    return healed.changed ? { ...healed, rejectedFor: verdict.rule } : undefined;
  },
  error: anthropicError,
};

/** Anthropic's error types by status (docs.anthropic.com/en/api/errors); `code` is kept out, as Anthropic has none. */
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

/** An error the proxy answers an Anthropic client with, in Anthropic's shape, so the SDK surfaces the message. */
export function anthropicError(status: number, message: string): LocalAnswer {
  const body = { type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } };
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

function sanitize(body: WireBody, policy: RepairSettings['policy']): SanitizedWireBody {
  const messages = body['messages'] as unknown[];
  const options: RepairOptions = { format: 'anthropic-messages', thinking: thinkingOf(body) };
  if (policy?.unanswered !== undefined) options.unanswered = policy.unanswered;
  if (policy?.orphans !== undefined) options.orphans = policy.orphans;
  const result = repair(messages, options);
  if (!result.changed) return { body, changed: false, changes: [], rules: [], remaining: result.remaining };
  return {
    body: { ...body, messages: result.messages },
    changed: true,
    changes: result.changes,
    rules: repairedRules(
      check(messages, { format: 'anthropic-messages', thinking: options.thinking ?? false }),
      result.remaining,
    ),
    remaining: result.remaining,
  };
}

function thinkingOf(body: WireBody): boolean {
  const type: unknown = (body['thinking'] as { type?: unknown } | null | undefined)?.type;
  return type === 'enabled' || type === 'adaptive';
}
