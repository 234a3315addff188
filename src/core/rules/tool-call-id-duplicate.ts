import type { Rule } from './rule.js';

/**
 * Found by the tool-block scan: one id used by two calls. Within one assistant message it is
 * always rejected; across turns only by profiles that say so (DeepSeek, Moonshot): llama.cpp's
 * constant ids and Ollama's `call_0` reused every turn are valid for OpenAI-style servers.
 */
export const toolCallIdDuplicate: Rule = {
  id: 'tool-call-id-duplicate',
  sources: [
    'CATALOGUE deepseek/tool-call-id-duplicate: https://github.com/BuilderIO/agent-native/pull/2312',
    'CATALOGUE moonshot/tool-call-id-duplicate: https://github.com/openclaw/openclaw/pull/51155',
    'CATALOGUE mistral/tool-result-id-mismatch (Duplicate tool call id ... in assistant message)',
  ],
  wording: {
    openai: (f) =>
      `Invalid parameter: Duplicate value for 'tool_calls.id' of '${f.toolCallId ?? ''}' in messages[${f.index}].`,
    deepseek: (f) => `Duplicate value for 'tool_call_id' of ${f.toolCallId ?? ''} in message[${f.index}]`,
    moonshot: (f) => `Invalid request: tool call id ${f.toolCallId ?? ''} is duplicated`,
    mistral: (f) => `Duplicate tool call id ${f.toolCallId ?? ''} in assistant message`,
  },
};
