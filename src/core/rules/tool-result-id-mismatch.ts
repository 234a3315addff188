import type { Rule } from './rule.js';

/** Found by the tool-block scan: a tool message in the run whose id is none of the assistant's call ids. */
export const toolResultIdMismatch: Rule = {
  id: 'tool-result-id-mismatch',
  sources: [
    'CATALOGUE openai-chat/tool-result-id-mismatch: https://github.com/aliasrobotics/cai/issues/111',
    'CATALOGUE mistral/tool-result-id-mismatch: https://github.com/mistralai/mistral-common/blob/main/src/mistral_common/protocol/instruct/validator.py',
  ],
  wording: {
    openai: (f) =>
      `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (tool_call_id '${f.toolCallId ?? ''}' at messages[${f.index}] matches no call of the preceding assistant message)`,
    deepseek: () => "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
    mistral: (f) => `Unexpected tool call id ${f.toolCallId ?? ''} in tool results`,
  },
};
