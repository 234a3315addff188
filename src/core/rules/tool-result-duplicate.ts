import type { Rule } from './rule.js';

/** Found by the tool-block scan: a second tool message answering the same call. */
export const toolResultDuplicate: Rule = {
  id: 'tool-result-duplicate',
  sources: [
    'CATALOGUE openai-chat/tool-result-duplicate: https://github.com/agno-agi/agno/issues/5116',
    'CATALOGUE mistral/tool-result-id-mismatch (Duplicate tool call id ... in tool results)',
  ],
  wording: {
    openai: (f) =>
      `Invalid parameter: Duplicate value for 'tool_call_id' of '${f.toolCallId ?? ''}', in messages[${fact0(f)}] and messages[${f.index}].`,
    deepseek: (f) => `Duplicate value for 'tool_call_id' of ${f.toolCallId ?? ''} in message[${f.index}]`,
    mistral: (f) => `Duplicate tool call id ${f.toolCallId ?? ''} in tool results`,
  },
};

function fact0(f: { facts?: Record<string, string | number> }): string {
  return String(f.facts?.['firstIndex'] ?? '');
}
