/**
 * Rule ids are API: add, never rename. They are the ids of the provider rule catalogue
 * (its machine-readable copy is test/fixtures/shared/rules.json),
 * plus the few this package needs that the catalogue does not name (marked below).
 */
export type RuleId =
  | 'tool-calls-unanswered'
  | 'tool-result-orphan'
  | 'tool-result-not-adjacent'
  | 'tool-result-id-mismatch'
  | 'tool-result-duplicate'
  | 'tool-call-id-missing'
  | 'tool-call-id-duplicate'
  | 'tool-call-id-format'
  | 'tool-calls-empty' // not in the catalogue: OpenAI's `empty_array` on tool_calls (corpus 008)
  | 'tool-calls-too-many'
  | 'tool-call-malformed' // not in the catalogue: a tool call without its `function` object (corpus 001)
  | 'tool-call-arguments-invalid-json'
  | 'content-null'
  | 'content-empty'
  | 'reasoning-content-missing'
  | 'tool-followed-by-user'
  | 'role-unknown'
  | 'unknown-message-field'
  | 'ends-with-assistant'
  | 'prefix-not-last'
  | 'roles-not-alternating'
  | 'no-user-message'
  | 'empty-messages'
  | 'message-malformed' // not in the catalogue: an entry that is not a message object at all
  | 'system-message-position'
  | 'user-message-repeated' // not in the catalogue: a crash retry's repeated user message (checked at level 'strongest')
  // Catalogue ids for other wire formats or request-level settings: classifyError names them; check does not look for them.
  | 'content-multiple-text-parts'
  | 'first-message-not-user'
  | 'json-keyword-required'
  | 'name-pattern'
  | 'prefix-requires-beta'
  | 'reasoning-content-forbidden'
  | 'reasoning-details-missing'
  | 'reasoning-item-missing'
  | 'reasoning-item-orphan'
  | 'system-role-in-messages'
  | 'system-role-unsupported'
  | 'text-block-empty'
  | 'thinking-block-missing'
  | 'thinking-block-not-first'
  | 'thinking-final-block'
  | 'thinking-signature-invalid'
  | 'thinking-when-disabled'
  | 'tool-call-turn-position'
  | 'tool-result-mixed-content'
  | 'tool-result-not-first'
  | 'tool-results-excess'
  | 'tool-results-split'
  | 'tool-use-wrong-role'
  | 'trailing-whitespace-final-assistant'
  | 'upstream-wrapped';

/**
 * The rules a heal may fix: a provider 400 naming one of these is what the agent runner, the
 * proxy and the plugin answer with a repair (level 'strongest') and one retry. Not the same list
 * as the pairing rules (rules/pairing-rules.ts): it adds ordering and content rules repair fixes,
 * and leaves out message-malformed, which no retry of the same history mends.
 */
export const HEALABLE_RULES: ReadonlySet<RuleId> = new Set<RuleId>([
  'tool-calls-unanswered',
  'tool-result-orphan',
  'tool-result-not-adjacent',
  'tool-result-id-mismatch',
  'tool-result-duplicate',
  'tool-call-id-missing',
  'tool-call-id-duplicate',
  'tool-call-id-format',
  'tool-calls-empty',
  'tool-call-malformed',
  'tool-followed-by-user',
  'reasoning-content-missing',
  'content-null',
  'content-empty',
  'ends-with-assistant',
  'roles-not-alternating',
]);

export function isHealableRule(rule: string): boolean {
  return HEALABLE_RULES.has(rule as RuleId);
}
