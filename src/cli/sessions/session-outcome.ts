import type { Change } from '../../core/changes.js';
import { check } from '../../core/check.js';
import { repair } from '../../core/repair.js';
import type { Remaining, Violation } from '../../core/violation.js';
import type { AgentSession } from './agent-session.js';

/** What is wrong with an agent's session, and what a repair would change: the one place scan calls the core. */
export interface SessionOutcome {
  violations: Violation[];
  changes: Change[];
  remaining: Remaining[];
  repaired: readonly unknown[];
}

export function assessSession(session: AgentSession): SessionOutcome {
  const violations = check(session.native, { format: session.wire });
  if (violations.length === 0) return { violations, changes: [], remaining: [], repaired: session.native };
  const result = repair(session.native, { format: session.wire });
  return { violations, changes: result.changes, remaining: result.remaining, repaired: result.messages };
}
