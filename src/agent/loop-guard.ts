import type { Message } from '../core/index.js';
import type { ToolOutcome } from './run-tool-block.js';
import { CANCELLED } from './run-tool-block.js';

export interface LoopGuard {
  /**
   * The hints to add after this whole block (never between its results): one for each tool that
   * has now failed `hintAfterFailures` times in a row in this turn. A success or a cancelled call
   * resets the tool's count, and so does its hint.
   */
  hintsAfter(outcomes: readonly ToolOutcome[]): Message[];
}

/** Counts each tool's consecutive failures over one turn's blocks; create one per turn. */
export function createLoopGuard(options: { hintAfterFailures: number; role: 'system' | 'user' }): LoopGuard {
  const failures = new Map<string, number>();
  return {
    hintsAfter(outcomes) {
      const hints: Message[] = [];
      for (const outcome of outcomes) {
        if (!outcome.isError || outcome.result === CANCELLED) {
          failures.set(outcome.name, 0);
          continue;
        }
        const count = (failures.get(outcome.name) ?? 0) + 1;
        failures.set(outcome.name, count >= options.hintAfterFailures ? 0 : count);
        if (count >= options.hintAfterFailures) hints.push(loopHint(outcome.name, count, options.role));
      }
      return hints;
    },
  };
}

/** Where a system message may only come first (Anthropic, local chat templates), the hint is a user message. */
export function loopHint(name: string, count: number, role: 'system' | 'user'): Message {
  return {
    role,
    content: `[loop guard] The tool "${name}" failed ${count} times in a row. Do not repeat the same call: try another approach, skip this step, or tell the user why it cannot be done.`,
  };
}
