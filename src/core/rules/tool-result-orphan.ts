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
    openai: () => "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
    deepseek: () => "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
    qwen: () => '<400> InternalError.Algo.InvalidParameter: messages with role "tool" must be a response to a preceeding message with "tool_calls".',
    mistral: (f) => `Unexpected role 'tool' after role '${f.facts?.['previousRole'] ?? 'user'}'`,
  },
};
