import type { Rule } from './rule.js';

/** Found by the tool-block scan: a tool message that does not follow an assistant message with tool_calls. */
export const toolResultOrphan: Rule = {
  id: 'tool-result-orphan',
  sources: [
    'CATALOGUE openai-chat/tool-result-orphan: https://github.com/miurla/morphic/issues/136, https://github.com/cline/cline/issues/269',
    'CATALOGUE deepseek/tool-result-orphan: https://github.com/itmisx/deepx-code/issues/94',
    'CATALOGUE dashscope/tool-result-orphan: https://github.com/QwenLM/qwen-code/issues/2360',
    'CATALOGUE mistral/tool-result-orphan: https://github.com/charmbracelet/crush/issues/279',
  ],
  wording: {
    openai: () =>
      "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
    deepseek: () => "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
    qwen: () =>
      '<400> InternalError.Algo.InvalidParameter: messages with role "tool" must be a response to a preceeding message with "tool_calls".',
    // Mistral's role-order check names the previous role only when it is not an allowed one; after a
    // tool or assistant message the count check is what fails.
    mistral: (f) => {
      const previous = String(f.facts?.['previousRole'] ?? 'user');
      return previous === 'tool' || previous === 'assistant'
        ? 'Not the same number of function calls and responses'
        : `Unexpected role 'tool' after role '${previous}'`;
    },
  },
};
