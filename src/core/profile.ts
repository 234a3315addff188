import type { ProfileTraits } from './profile-traits.js';
import type { Rule } from './rules/rule.js';
import type { Violation } from './violation.js';

export type { Dialect, ProfileName, ProfileTraits } from './profile-traits.js';

/**
 * A provider profile: the rules the provider enforces on an OpenAI-chat `messages` array, the
 * traits they depend on, and how the provider answers a violation (status and error body), so
 * the emulator can answer exactly as the provider does. Type-only: the table is in profiles.ts.
 */
export interface Profile extends ProfileTraits {
  description: string;
  rules: readonly Rule[];
  errorResponse(violation: Violation): { status: number; body: unknown };
}
