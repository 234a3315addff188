import { defaultContextWindow } from '../agent/compact-history.js';
import { UnstuckError } from '../core/errors.js';
import type { ProfileName } from '../core/profiles.js';

export interface CompactionSettings {
  contextWindow: number;
  compaction: { threshold?: number } | false;
}

/**
 * The window the chat keeps a session under, and when it compacts: `UNSTUCK_CONTEXT_WINDOW`
 * (tokens) over the project config's `contextWindow` over the profile's usual window;
 * `UNSTUCK_COMPACT_THRESHOLD` (a fraction of the window, or `off`) over the runner's default. Env
 * for now: the user-level config file will carry these keys too.
 */
export function compactionSettings(input: {
  profile: ProfileName;
  contextWindow: number | undefined;
  env: Record<string, string | undefined>;
}): CompactionSettings {
  const windowText = input.env['UNSTUCK_CONTEXT_WINDOW'];
  let contextWindow = input.contextWindow ?? defaultContextWindow(input.profile);
  if (windowText !== undefined && windowText !== '') {
    const value = Number(windowText);
    if (!Number.isInteger(value) || value < 1024)
      throw new UnstuckError(
        'USAGE',
        `UNSTUCK_CONTEXT_WINDOW: expected a whole number of tokens, at least 1024, got '${windowText}'`,
      );
    contextWindow = value;
  }
  const thresholdText = input.env['UNSTUCK_COMPACT_THRESHOLD'];
  if (thresholdText === undefined || thresholdText === '') return { contextWindow, compaction: {} };
  if (thresholdText === 'off') return { contextWindow, compaction: false };
  const threshold = Number(thresholdText);
  if (!(threshold > 0 && threshold <= 1))
    throw new UnstuckError(
      'USAGE',
      `UNSTUCK_COMPACT_THRESHOLD: expected a fraction of the window above 0 and at most 1, or 'off', got '${thresholdText}'`,
    );
  return { contextWindow, compaction: { threshold } };
}
