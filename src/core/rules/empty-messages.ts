import type { Rule } from './rule.js';

/** A request needs at least one message. */
export const emptyMessages: Rule = {
  id: 'empty-messages',
  sources: [
    'CATALOGUE openai-chat/empty-messages: https://github.com/CopilotKit/CopilotKit/issues/529',
    'CATALOGUE mistral/empty-messages',
  ],
  wording: {
    openai: () =>
      "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
    mistral: () => 'Conversation must have at least one message',
  },
  finish(context) {
    if (context.scope === 'request' && context.messages.length === 0)
      context.report({ rule: 'empty-messages', index: 0 });
  },
};
