import type { Rule } from './rule.js';

/** Found by the tool-block scan: a tool message without tool_call_id, or a call without id. */
export const toolCallIdMissing: Rule = {
  id: 'tool-call-id-missing',
  sources: [
    'CATALOGUE openai-chat/tool-call-id-missing: https://github.com/ymichael/open-codex/issues/5',
    'CATALOGUE mistral/tool-call-id-missing: https://github.com/Gage-Technologies/mistral-go/issues/8',
    'CATALOGUE groq/tool-call-id-missing: https://github.com/hackclub/ai/issues/22',
  ],
  wording: {
    openai: (f) =>
      f.facts?.['call'] === undefined
        ? "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'."
        : `Missing required parameter: 'messages[${f.index}].tool_calls[${f.facts['call']}].id'.`,
    mistral: () => 'Tool call id has to be defined.',
    groq: (f) =>
      `'messages.${f.index}' : for 'role:tool' the following must be satisfied[('messages.${f.index}.tool_call_id' : property 'tool_call_id' is missing)]`,
  },
};
