import { isToolCallMalformed } from '../tool-call-shape.js';
import type { Rule } from './rule.js';

/**
 * A tool call without its `{ type: 'function', function: { name, arguments } }` shape, e.g. name and
 * arguments flattened onto the call (corpus 001). DeepSeek's server deserialises with serde, hence
 * the wording (its `role-unknown` text shows the same form).
 */
export const toolCallMalformed: Rule = {
  id: 'tool-call-malformed',
  sources: [
    'corpus 001: https://github.com/deepseek-ai/awesome-deepseek-integration/issues/520',
    'CATALOGUE deepseek/role-unknown (serde wording)',
  ],
  wording: {
    openai: (f) =>
      `Missing required parameter: 'messages[${f.index}].tool_calls[${String(f.facts?.['call'] ?? 0)}].function'.`,
    deepseek: (f) =>
      `Failed to deserialize the JSON body into the target type: messages[${f.index}].tool_calls[${String(f.facts?.['call'] ?? 0)}]: missing field \`function\``,
  },
  roles: ['assistant'],
  visit(message, index, context) {
    if (message.role !== 'assistant' || !Array.isArray(message.tool_calls)) return;
    const calls = message.tool_calls;
    for (let position = 0; position < calls.length; position += 1) {
      if (isToolCallMalformed(calls[position]))
        context.report({ rule: 'tool-call-malformed', index, facts: { call: position } });
    }
  },
};
