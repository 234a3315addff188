import type { Rule } from './rule.js';

/** An assistant message with prefix:true must be the last message. */
export const prefixNotLast: Rule = {
  id: 'prefix-not-last',
  sources: [
    'CATALOGUE mistral/prefix-not-last: https://github.com/mistralai/mistral-common/blob/main/src/mistral_common/protocol/instruct/validator.py',
    'CATALOGUE deepseek/prefix-requires-beta: https://api-docs.deepseek.com/guides/chat_prefix_completion',
  ],
  wording: { openai: () => 'Assistant message with prefix True must be last message' },
  roles: ['assistant'],
  visit(message, index, context) {
    if (message.role === 'assistant' && message.prefix === true && index !== context.messages.length - 1)
      context.report({ rule: 'prefix-not-last', index });
  },
};
