import type { Rule } from './rule.js';

/** Groq (and Cerebras) reject fields they do not know for a role, reasoning_content among them. */
export const unknownMessageField: Rule = {
  id: 'unknown-message-field',
  sources: [
    'CATALOGUE groq/unknown-message-field: https://github.com/tashfeenahmed/freellmapi/issues/1070, https://github.com/janhq/jan/issues/8136',
    'CATALOGUE cerebras/unknown-message-field',
  ],
  wording: {
    openai: (f) =>
      `'messages.${f.index}' : for 'role:${String(f.facts?.['role'] ?? '')}' the following must be satisfied[('messages.${f.index}' : property '${String(f.facts?.['field'] ?? '')}' is unsupported)]`,
  },
  visit(message, index, context) {
    const allowed = context.profile.fields?.[message.role];
    if (allowed === undefined) return;
    for (const field of Object.keys(message)) {
      if (!allowed.has(field))
        context.report({ rule: 'unknown-message-field', index, facts: { role: message.role, field } });
    }
  },
};
