import type { RepairOptions, RepairPolicy } from '../../core/index.js';
import { check, classifyError, repair } from '../../core/index.js';
import type { HttpWire, SanitizedWireBody, WireBody } from './http-wire.js';
import { parseObject, pathnameOf, repairedRules } from './http-wire.js';

/**
 * Anthropic Messages: `POST …/v1/messages` and `…/v1/messages/count_tokens`, whatever the base
 * path and query (Claude Code sends `?beta=true`). Repaired with the core's Anthropic format
 * (`repair` with format 'anthropic-messages'); thinking is on for `thinking: {type: "enabled"}` and
 * `{type: "adaptive"}`, so the current tool loop's signed thinking block is required and kept.
 */
export const anthropicMessagesWire: HttpWire = {
  name: 'anthropic',
  matches(url) {
    const pathname = pathnameOf(url);
    return pathname !== undefined && /\/messages(?:\/count_tokens)?\/?$/.test(pathname);
  },
  parse(text) {
    const body = parseObject(text);
    return body !== undefined && Array.isArray(body['messages']) ? body : undefined;
  },
  sanitize: (body, policy) => sanitize(body, policy),
  heal(sent, status, text, policy) {
    if (status !== 400) return undefined;
    const verdict = classifyError(status, text);
    if (verdict === undefined || !verdict.provider.includes('anthropic')) return undefined;
    // The request was repaired before it went out: a retry helps only if the repair, given the
    // rule the provider named, still finds something to change (it never invents what only
    // Anthropic can issue, such as a thinking signature).
    const healed = sanitize(sent, policy, 'strongest');
    return healed.changed ? { ...healed, rejectedFor: verdict.rule } : undefined;
  },
};

function sanitize(
  body: WireBody,
  policy: RepairPolicy | undefined,
  level: 'default' | 'strongest' = 'default',
): SanitizedWireBody {
  const messages = body['messages'] as unknown[];
  // The request's model and thinking setting decide the rules that depend on them (prefill, thinking when disabled).
  const options: RepairOptions = { format: 'anthropic-messages', level };
  const thinking = thinkingOf(body);
  if (thinking !== undefined) options.thinking = thinking;
  if (typeof body['model'] === 'string') options.model = body['model'];
  if (policy?.unanswered !== undefined) options.unanswered = policy.unanswered;
  if (policy?.orphans !== undefined) options.orphans = policy.orphans;
  const result = repair(messages, options);
  if (!result.changed) return { body, changed: false, changes: [], rules: [], remaining: result.remaining };
  return {
    body: { ...body, messages: result.messages },
    changed: true,
    changes: result.changes,
    rules: repairedRules(check(messages, options), result.remaining),
    remaining: result.remaining,
  };
}

function thinkingOf(body: WireBody): boolean {
  const type: unknown = (body['thinking'] as { type?: unknown } | null | undefined)?.type;
  return type === 'enabled' || type === 'adaptive';
}
