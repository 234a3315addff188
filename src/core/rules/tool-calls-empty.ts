import type { Rule } from './rule.js';

/** `tool_calls: []` (an SDK's parse() returns it instead of omitting the key): OpenAI's `empty_array`. */
export const toolCallsEmpty: Rule = {
  id: 'tool-calls-empty',
  sources: [
    'corpus 008: https://github.com/openai/openai-python/issues/2061 (also home-assistant/core#118577, chatboxai/chatbox#2079)',
  ],
  wording: {
    openai: (f) =>
      `Invalid 'messages[${f.index}].tool_calls': empty array. Expected an array with minimum length 1, but got an empty array instead.`,
  },
  roles: ['assistant'],
  visit(message, index, context) {
    if (message.role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length === 0) {
      context.report({ rule: 'tool-calls-empty', index });
    }
  },
};
