import type { SessionProblem } from './agent-port.js';
import { describeChanges } from './chat-renderer.js';
import type { OpenedSession } from './open-chat-session.js';

/** The lines that tell the person what opening a session found and repaired; none for a clean one. */
export function describeOpenedSession(session: OpenedSession): string[] {
  const lines: string[] = [];
  for (const problem of session.problems) lines.push(`${formatProblem(problem)}`);
  lines.push(...describeChanges(`session ${session.id} was repaired`, session.changes));
  return lines;
}

export function formatProblem(problem: SessionProblem): string {
  return `${problem.line === undefined ? problem.file : `${problem.file}:${problem.line}`}: ${problem.why}`;
}
