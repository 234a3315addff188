import type { Message } from '../core/index.js';
import { compactedView } from './compact-history.js';
import type { RequestWindow } from './context-window.js';
import { charsOf, selectWindow } from './context-window.js';
import type { AgentConfig } from './resolve-agent-options.js';

/** How many tokens a request may carry, and what part of the history fits: the estimate learns from usage. */
export interface ContextBudget {
  charsPerToken(): number;
  /** The budget of one request in tokens: the window minus the reserve, the system prompt and the tools. */
  budgetTokens(): number;
  /** Estimated tokens of a request carrying these messages (the system prompt and tools included). */
  tokensOf(messages: readonly Message[]): number;
  /** What the next request carries of the history: all of it, unless a window was named. */
  window(history: Message[]): RequestWindow;
  /** Learns characters per token from the prompt tokens a request carrying these messages cost. */
  calibrate(messages: readonly Message[], promptTokens: number): void;
}

/** Three characters per token until the first usage report says otherwise. */
const INITIAL_CHARS_PER_TOKEN = 3;

export function createContextBudget(
  config: Pick<AgentConfig, 'contextWindow' | 'reserveTokens' | 'fixedChars' | 'fitToWindow'>,
): ContextBudget {
  let charsPerToken = INITIAL_CHARS_PER_TOKEN;
  const charsOfRequest = (messages: readonly Message[]): number => {
    let chars = config.fixedChars;
    for (const message of messages) chars += charsOf(message);
    return chars;
  };
  const budgetTokens = (): number =>
    config.contextWindow - config.reserveTokens - Math.ceil(config.fixedChars / charsPerToken);
  return {
    charsPerToken: () => charsPerToken,
    budgetTokens,
    tokensOf: (messages) => Math.ceil(charsOfRequest(messages) / charsPerToken),
    window(history) {
      if (!config.fitToWindow) return { messages: history, omitted: 0, estimatedTokens: 0 };
      // After a compaction, requests carry the summary in place of the turns it covers.
      return selectWindow(compactedView(history).messages, budgetTokens(), charsPerToken);
    },
    calibrate(messages, promptTokens) {
      if (!config.fitToWindow || promptTokens <= 0) return;
      charsPerToken = Math.min(6, Math.max(1, charsOfRequest(messages) / promptTokens));
    },
  };
}
