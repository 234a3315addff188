import type { Rule } from './rule.js';

/** Found by the tool-block scan: a call with no result in the run of tool messages right after its assistant message. */
export const toolCallsUnanswered: Rule = {
  id: 'tool-calls-unanswered',
  sources: [
    'CATALOGUE openai-chat/tool-calls-unanswered: https://platform.openai.com/docs/guides/function-calling, https://github.com/BerriAI/litellm/issues/10083',
    'CATALOGUE deepseek/tool-calls-unanswered: https://github.com/langgenius/dify/issues/32222',
    'CATALOGUE dashscope/tool-calls-unanswered: https://github.com/QwenLM/qwen-code/issues/315',
    'CATALOGUE mistral/tool-calls-unanswered: https://github.com/mistralai/client-ts/issues/106',
  ],
  wording: {
    openai: (f) =>
      `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${f.toolCallId ?? ''}`,
    deepseek: () =>
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)",
    qwen: (f) =>
      `<400> InternalError.Algo.InvalidParameter: An assistant message with "tool_calls" must be followed by tool messages responding to each "tool_call_id". The following tool_call_ids did not have response messages: message[${f.index}].role`,
    mistral: () => 'Not the same number of function calls and responses',
  },
};
