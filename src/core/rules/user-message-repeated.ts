import { textOf } from '../messages.js';
import type { Rule } from './rule.js';

/**
 * Not a provider rule: the same user message twice in a row, as a crash-retry loop leaves it
 * (the DeepSeek Harness plugin dsh-messages-sanitizer reports duplicate user messages between the
 * orphan call and the injection point). Checked only at level 'strongest', where a heal folds them.
 */
export const userMessageRepeated: Rule = {
  id: 'user-message-repeated',
  sources: [
    'dsh-messages-sanitizer (a DeepSeek Harness plugin; its third defence, agent/request-error, folds duplicate user messages)',
    'corpus 004: https://github.com/aws-samples/bedrock-access-gateway/issues/25',
  ],
  wording: { openai: (f) => `messages[${f.index}] repeats the user message at messages[${f.index - 1}]` },
  roles: ['user'],
  visit(message, index, context) {
    if (message.role !== 'user' || index === 0) return;
    const previous = context.messages[index - 1];
    if (previous?.role === 'user' && isSameUserMessage(previous.content, message.content))
      context.report({ rule: 'user-message-repeated', index });
  },
};

export function isSameUserMessage(a: unknown, b: unknown): boolean {
  if (typeof a === 'string' && typeof b === 'string') return a === b;
  if (Array.isArray(a) && Array.isArray(b))
    return textOf(a as never) === textOf(b as never) && JSON.stringify(a) === JSON.stringify(b);
  return false;
}
