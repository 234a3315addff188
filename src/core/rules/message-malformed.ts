import type { Rule } from './rule.js';

/** An entry that is not a message object with a string role: every provider fails to deserialise it. */
export const messageMalformed: Rule = {
  id: 'message-malformed',
  sources: ['CATALOGUE deepseek/role-unknown (serde wording); CATALOGUE openai-chat/role-unknown'],
  wording: {
    openai: (f) => `Invalid type for 'messages[${f.index}]': expected an object with a 'role', but got ${String(f.facts?.['got'] ?? 'something else')} instead.`,
    deepseek: (f) => `Failed to deserialize the JSON body into the target type: messages[${f.index}]: missing field \`role\``,
  },
};
