import type { Message } from '../messages.js';
import type { Dialect, ProfileTraits } from '../profile-traits.js';
import type { RuleId } from '../rule-ids.js';

export type { Dialect } from '../profile-traits.js';

/** What a rule found, before it is worded for a provider. */
export interface Finding {
  rule: RuleId;
  index: number;
  toolCallId?: string;
  /** Extra facts the wording needs (a field name, the previous role, the other index...). */
  facts?: Record<string, string | number>;
}

export interface RuleContext {
  readonly messages: readonly Message[];
  readonly profile: ProfileTraits;
  readonly dialect: Dialect;
  readonly scope: 'history' | 'request';
  readonly thinking: boolean;
  readonly model: string | undefined;
  /** Index of the last user message, -1 when there is none. */
  readonly lastUserIndex: number;
  report(finding: Finding): void;
}

/**
 * One provider rule. `sources` cites the catalogue entries (provider/id of the catalogue whose
 * copy is test/fixtures/shared/rules.json) and their public sources. `wording` renders a finding
 * as the provider words it; a dialect without its own wording uses OpenAI's.
 */
export interface Rule {
  id: RuleId;
  sources: readonly string[];
  wording: Partial<Record<Dialect, (finding: Finding) => string>> & { openai: (finding: Finding) => string };
  /** The roles `visit` looks at (absent: every role), so check calls it only for those. */
  roles?: readonly string[];
  /** Per-message rules look at one message at a time; sequence rules are found by the tool-block scan. */
  visit?: (message: Message, index: number, context: RuleContext) => void;
  /** Runs once after every message was visited. */
  finish?: (context: RuleContext) => void;
}
