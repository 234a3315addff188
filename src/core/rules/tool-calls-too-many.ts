import type { Rule } from './rule.js';

/** OpenAI caps an assistant message at 128 tool calls. */
export const toolCallsTooMany: Rule = {
  id: 'tool-calls-too-many',
  sources: ['CATALOGUE openai-chat/tool-calls-too-many: https://github.com/openai/openai-dotnet/issues/317'],
  wording: {
    openai: (f) =>
      `Invalid 'messages[${f.index}].tool_calls': array too long. Expected an array with maximum length 128, but got an array with length ${String(f.facts?.['length'] ?? '')} instead.`,
  },
  roles: ['assistant'],
  visit(message, index, context) {
    if (message.role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length > 128) {
      context.report({ rule: 'tool-calls-too-many', index, facts: { length: message.tool_calls.length } });
    }
  },
};
