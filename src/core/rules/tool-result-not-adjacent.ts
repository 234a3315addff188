import type { Rule } from './rule.js';

/**
 * Found by the tool-block scan: a tool message answering a call of an earlier assistant message,
 * with something wedged in between (NexForgeCLI's ghost messages, ADK's injected instruction).
 * The catalogue notes providers report it with the orphan wording.
 */
export const toolResultNotAdjacent: Rule = {
  id: 'tool-result-not-adjacent',
  sources: [
    'CATALOGUE openai-chat/tool-result-not-adjacent: https://github.com/ogx-ai/ogx/pull/6367, https://github.com/leookun/cursor-byok/issues/307',
    'seed 000 (NexForgeCLI 0.4.1): ghost messages wedged between tool_calls and results',
  ],
  wording: {
    openai: () => "Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
    deepseek: () => "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
    qwen: () => '<400> InternalError.Algo.InvalidParameter: messages with role "tool" must be a response to a preceeding message with "tool_calls".',
    // Mistral's role-order check names the previous role only when it is not an allowed one; after a
    // tool or assistant message the count check is what fails.
    mistral: (f) => {
      const previous = String(f.facts?.['previousRole'] ?? 'user');
      return previous === 'tool' || previous === 'assistant' ? 'Not the same number of function calls and responses' : `Unexpected role 'tool' after role '${previous}'`;
    },
  },
};
