import type { Rule } from './rule.js';

/** Mistral: after a tool message only another tool message or an assistant message may follow. */
export const toolFollowedByUser: Rule = {
  id: 'tool-followed-by-user',
  sources: [
    'CATALOGUE mistral/tool-followed-by-user: https://github.com/zed-industries/zed/issues/37021, https://github.com/datapizza-labs/datapizza-ai/issues/98',
    'corpus 019',
  ],
  wording: {
    openai: (f) => `Unexpected role '${String(f.facts?.['role'] ?? 'user')}' after role 'tool'`,
  },
  roles: ['user', 'system'],
  visit(message, index, context) {
    if (index === 0 || (message.role !== 'user' && message.role !== 'system')) return;
    if (context.messages[index - 1]?.role === 'tool')
      context.report({ rule: 'tool-followed-by-user', index, facts: { role: message.role } });
  },
};
