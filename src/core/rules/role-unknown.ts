import type { Rule } from './rule.js';

/** A role the provider does not know ('developer' on DeepSeek and DashScope, '' anywhere). */
export const roleUnknown: Rule = {
  id: 'role-unknown',
  sources: [
    'CATALOGUE openai-chat/role-unknown: https://github.com/lss233/kirara-ai/issues/1028',
    'CATALOGUE deepseek/role-unknown: https://github.com/decolua/9router/issues/773',
    'CATALOGUE dashscope/role-unknown: https://github.com/DayuanJiang/next-ai-draw-io/issues/304',
  ],
  wording: {
    openai: (f) =>
      `'${String(f.facts?.['role'] ?? '')}' is not one of ['system', 'developer', 'user', 'assistant', 'tool', 'function'] - 'messages.${f.index}.role'`,
    deepseek: (f) =>
      `Failed to deserialize the JSON body into the target type: messages[${f.index}].role: unknown variant \`${String(f.facts?.['role'] ?? '')}\`, expected one of \`system\`, \`user\`, \`assistant\`, \`tool\`, \`latest_reminder\``,
    qwen: (f) =>
      `${String(f.facts?.['role'] ?? '')} is not one of ['system', 'assistant', 'user', 'tool', 'function'] - 'messages.['${f.index}].role'`,
  },
  visit(message, index, context) {
    if (!context.profile.roles.has(message.role))
      context.report({ rule: 'role-unknown', index, facts: { role: message.role } });
  },
};
