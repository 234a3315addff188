import type { Profile, ProfileName } from '../profile.js';
import { pairingRules } from '../rules/pairing-rules.js';

/**
 * The profile the core's repair runs with on a converted history: only the pairing rules (every
 * call answered by the results right after it, no orphan or duplicate results, ids present). The
 * format's own rules (alternation, empty blocks, positions) are fixed on the native form, where
 * no block is lost in a text join.
 */
export function pairingProfile(name: ProfileName, uniqueIdsAcrossRequest: boolean): Profile {
  return {
    name,
    dialect: 'openai',
    description: 'pairing rules only, for a history converted from another wire format',
    rules: pairingRules,
    roles: new Set(['system', 'developer', 'user', 'assistant', 'tool']),
    uniqueIdsAcrossRequest,
    nativeContent: true,
    thinkingByDefault: () => false,
    errorResponse: (violation) => ({ status: 400, body: { error: { message: violation.message } } }),
  };
}
