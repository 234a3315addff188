import type { RuleId } from '../rule-ids.js';
import { messageMalformed } from './message-malformed.js';
import type { Rule } from './rule.js';
import { toolCallIdDuplicate } from './tool-call-id-duplicate.js';
import { toolCallIdMissing } from './tool-call-id-missing.js';
import { toolCallsUnanswered } from './tool-calls-unanswered.js';
import { toolResultDuplicate } from './tool-result-duplicate.js';
import { toolResultIdMismatch } from './tool-result-id-mismatch.js';
import { toolResultNotAdjacent } from './tool-result-not-adjacent.js';
import { toolResultOrphan } from './tool-result-orphan.js';

/**
 * The pairing rules: every call answered by the results right after it, no orphan or duplicate
 * result, ids present and unique, every entry a message. Every OpenAI-compatible provider enforces
 * them (each profile starts with this list), and the tool-block scan finds them. The one list.
 */
export const pairingRules: readonly Rule[] = [
  toolCallsUnanswered,
  toolResultOrphan,
  toolResultNotAdjacent,
  toolResultIdMismatch,
  toolResultDuplicate,
  toolCallIdMissing,
  toolCallIdDuplicate,
  messageMalformed,
];

/** The ids of `pairingRules`. */
export const PAIRING_RULES: ReadonlySet<RuleId> = new Set(pairingRules.map((rule) => rule.id));

export function isPairingRule(rule: string): boolean {
  return PAIRING_RULES.has(rule as RuleId);
}
