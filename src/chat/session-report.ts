import { isAbsolute, relative } from 'node:path';
import type { SessionProblem } from '../session/index.js';
import { describeChanges } from './chat-renderer.js';
import type { OpenedSession } from './open-chat-session.js';

/** The lines that tell the person what opening a session found and repaired; none for a clean one. */
export function describeOpenedSession(session: OpenedSession, cwd: string): string[] {
  const lines: string[] = [];
  for (const problem of session.problems) lines.push(formatProblem(problem, cwd));
  lines.push(...describeChanges(`session ${session.id} was repaired`, session.changes));
  return lines;
}

/** `FILE:LINE: why`, the file relative to the working directory when it is inside it. */
export function formatProblem(problem: SessionProblem, cwd: string): string {
  const inside = relative(cwd, problem.file);
  const file = inside !== '' && !inside.startsWith('..') && !isAbsolute(inside) ? inside : problem.file;
  return `${problem.line === undefined ? file : `${file}:${problem.line}`}: ${problem.why}`;
}
