import type { Change, Profile, ProfileName, Remaining, RuleId } from '../../core/index.js';
import { isHealableRule } from '../../core/index.js';
import type { LocalAnswer } from '../openai-error-response.js';
import type { RepairPolicy } from '../sanitize-chat-body.js';

/** The wires the proxy tells apart: chat completions, and the native ones. */
export type WireName = 'chat' | 'anthropic' | 'responses' | 'gemini';
/** The wires besides chat completions, which the sanitizing fetch reaches through sanitize-by-wire.ts. */
export type NativeWireName = Exclude<WireName, 'chat'>;

/** A request body of a wire: a JSON object; every field the wire does not repair is kept as it came. */
export type WireBody = Record<string, unknown>;

/** What a repair may take into account: the provider's rules (chat completions only) and the repair choices. */
export interface RepairSettings {
  profile?: ProfileName | Profile | undefined;
  policy?: RepairPolicy | undefined;
  /**
   * The URL the request goes to (the upstream's, in the proxy; the request's, in the sanitizing
   * fetch), where a wire's rules depend on it: the Gemini model is in its path, and the ChatGPT
   * Codex backend is known by its origin and path. Never logged by a wire.
   */
  url?: string | undefined;
}

export interface SanitizedWireBody {
  body: WireBody;
  changed: boolean;
  changes: Change[];
  /** The rules whose violations the repair removed. */
  rules: RuleId[];
  remaining: Remaining[];
}

/**
 * One wire, as the proxy and the sanitizing fetch see it: which requests are its own (the path
 * decides), what a body of its shape is, how it is repaired as a request, whether a 400 of the
 * provider's is worth one retry, and the error shape its clients parse. A new wire is one file
 * with one of these and a line in wire-table.ts.
 */
export interface HttpWire<N extends WireName = WireName> {
  name: N;
  /** True for a request pathname of this wire (already parsed: no query). */
  matchesPath(pathname: string): boolean;
  /** True for a URL of this wire's requests (the path decides; a query such as `?beta=true` is kept). */
  matches(url: string): boolean;
  /** The body when it has this wire's shape, else undefined (then it goes out untouched). */
  parse(text: string): WireBody | undefined;
  /** Repairs the body as a request; a valid body comes back as the same object with `changed: false`. */
  sanitize(body: WireBody, settings: RepairSettings): SanitizedWireBody;
  /** After the provider's 400: the body to send once more and the rule the 400 names, or undefined (the 400 goes back as it came). */
  heal(
    sent: WireBody,
    status: number,
    text: string,
    settings: RepairSettings,
  ): (SanitizedWireBody & { rejectedFor: RuleId }) | undefined;
  /**
   * A request of this wire's path the proxy answers itself, before any upstream (status, message,
   * code: sent in `error`'s shape), or undefined to carry it on. The Responses wire refuses a
   * WebSocket handshake this way.
   */
  answersLocally?(method: string, pathname: string): { status: number; message: string; code: string } | undefined;
  /** An error the proxy answers itself (413, 502, 504…), in the shape this wire's clients parse. */
  error(status: number, message: string, code: string): LocalAnswer;
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

/**
 * A heal's retry is worth sending when the stronger repair removed what the provider's 400 named
 * (or, the 400 naming a pairing or ordering rule, another such rule: one text can stand for several).
 */
export function healsNamedRule(rules: readonly RuleId[], named: RuleId): boolean {
  return rules.some((rule) => rule === named || (isHealableRule(rule) && isHealableRule(named)));
}
