import type { RuleId } from './rule-ids.js';

/** A broken rule, in any wire format. `index` is the index in the array checked (messages, contents or input items). */
export interface Violation {
  rule: RuleId;
  index: number;
  toolCallId?: string;
  /** The violation as the provider words it in its 400. */
  message: string;
}

/** A violation repair could not fix, and why. */
export interface Remaining extends Violation {
  why: string;
}
