import { checkFormat } from '../../core/formats/check-format.js';
import type { FormatChange, FormatRemaining, FormatViolation } from '../../core/formats/format-types.js';
import { repairFormat } from '../../core/formats/repair-format.js';
import type { AgentSession } from './agent-session.js';

/** What is wrong with an agent's session, and what a repair would change: the one place scan calls the core. */
export interface SessionOutcome {
  violations: FormatViolation[];
  changes: FormatChange[];
  remaining: FormatRemaining[];
  repaired: readonly unknown[];
}

export function assessSession(session: AgentSession): SessionOutcome {
  const violations = checkFormat(session.wire, session.native);
  if (violations.length === 0) return { violations, changes: [], remaining: [], repaired: session.native };
  const result = repairFormat(session.wire, session.native);
  return { violations, changes: result.changes, remaining: result.remaining, repaired: result.messages };
}
