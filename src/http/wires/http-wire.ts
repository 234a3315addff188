import type { Change, Remaining, RuleId } from '../../core/index.js';
import type { RepairPolicy } from '../sanitize-chat-body.js';

/** A request body of a native wire: a JSON object; every field the wire does not repair is kept as it came. */
export type WireBody = Record<string, unknown>;

export interface SanitizedWireBody {
  body: WireBody;
  changed: boolean;
  changes: Change[];
  /** The rules whose violations the repair removed. */
  rules: RuleId[];
  remaining: Remaining[];
}

/**
 * One wire besides OpenAI chat, as the sanitizing fetch sees it: which URLs are its requests, what
 * a body of its shape is, how it is repaired as a request, and whether a 400 of the provider's is
 * worth one retry. Responses and Gemini (issue 15) are more entries of the table in
 * sanitize-by-wire.ts.
 */
export interface HttpWire {
  name: 'anthropic' | 'responses' | 'gemini';
  /** True for a URL of this wire's requests (the path decides; a query such as `?beta=true` is kept). */
  matches(url: string): boolean;
  /** The body when it has this wire's shape, else undefined (then it goes out untouched). */
  parse(text: string): WireBody | undefined;
  /** Repairs the body as a request; a valid body comes back as the same object with `changed: false`. */
  sanitize(body: WireBody, policy: RepairPolicy | undefined): SanitizedWireBody;
  /** After the provider's 400: the body to send once more and the rule the 400 names, or undefined (the 400 goes back as it came). */
  heal(
    sent: WireBody,
    status: number,
    text: string,
    policy: RepairPolicy | undefined,
  ): (SanitizedWireBody & { rejectedFor: RuleId }) | undefined;
}

export function pathnameOf(url: string): string | undefined {
  try {
    return url.startsWith('/') ? new URL(url, 'http://localhost').pathname : new URL(url).pathname;
  } catch {
    return undefined;
  }
}

export function parseObject(text: string): WireBody | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as WireBody) : undefined;
}

/** The rules found before that the repair left fewer of. */
export function repairedRules(before: readonly { rule: RuleId }[], remaining: readonly { rule: RuleId }[]): RuleId[] {
  const left = new Map<RuleId, number>();
  for (const violation of remaining) left.set(violation.rule, (left.get(violation.rule) ?? 0) + 1);
  const found = new Map<RuleId, number>();
  for (const violation of before) found.set(violation.rule, (found.get(violation.rule) ?? 0) + 1);
  return [...found].filter(([rule, count]) => count > (left.get(rule) ?? 0)).map(([rule]) => rule);
}
