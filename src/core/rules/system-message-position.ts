import type { Rule } from './rule.js';

/** One system message, first: Qwen3.5+ and other chat templates; Claude takes system text only at the top. */
export const systemMessagePosition: Rule = {
  id: 'system-message-position',
  sources: [
    'CATALOGUE hf-chat-template/system-message-position: https://github.com/anomalyco/opencode/issues/16560',
    'CATALOGUE anthropic/system-role-in-messages; corpus 003: https://github.com/BerriAI/litellm/issues/3474',
  ],
  wording: { openai: () => 'System message must be at the beginning.' },
  roles: ['system'],
  visit(message, index, context) {
    if (message.role === 'system' && index > 0) context.report({ rule: 'system-message-position', index });
  },
};
