import type { Rule } from './rule.js';

/**
 * No two consecutive user or two consecutive assistant messages: deepseek-reasoner (R1 era), and
 * profiles with strict alternation (Bedrock Converse behind a gateway, Llama-2/Mistral/Gemma-style
 * chat templates). Tool results do not count as a turn of their own.
 */
export const rolesNotAlternating: Rule = {
  id: 'roles-not-alternating',
  sources: [
    'CATALOGUE deepseek/roles-not-alternating: https://github.com/deepseek-ai/DeepSeek-R1/issues/21, https://github.com/BerriAI/litellm/issues/8018',
    'CATALOGUE bedrock-converse/roles-not-alternating; CATALOGUE hf-chat-template/roles-not-alternating: https://github.com/vllm-project/vllm/issues/6862',
    'corpus 004, 021',
  ],
  wording: {
    openai: () =>
      'After the optional system message, conversation roles must alternate user and assistant roles except for tool calls and results.',
    deepseek: (f) =>
      `deepseek-reasoner does not support successive user or assistant messages (messages[${f.index - 1}] and messages[${f.index}] in your input). You should interleave the user/assistant messages in the message sequence.`,
  },
  roles: ['user', 'assistant'],
  visit(message, index, context) {
    if (index === 0 || !alternationRequired(context)) return;
    if (message.role !== 'user' && message.role !== 'assistant') return;
    if (context.messages[index - 1]?.role === message.role) context.report({ rule: 'roles-not-alternating', index });
  },
};

export function alternationRequired(context: {
  profile: { strictAlternation?: boolean; name: string };
  model: string | undefined;
}): boolean {
  return (
    context.profile.strictAlternation === true ||
    (context.profile.name === 'deepseek' && context.model === 'deepseek-reasoner')
  );
}
