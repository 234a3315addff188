import type { Rule } from './rule.js';

/**
 * A request must not end with an assistant message unless it is a prefix (DeepSeek thinking mode
 * and deepseek-reasoner, Mistral). A saved history normally ends with the answer, so this is a
 * request-scope rule only.
 */
export const endsWithAssistant: Rule = {
  id: 'ends-with-assistant',
  sources: [
    'CATALOGUE deepseek/ends-with-assistant: https://github.com/gptme/gptme/issues/467, https://github.com/BerriAI/litellm/issues/8090',
    'CATALOGUE mistral/ends-with-assistant: https://github.com/0xPlaygrounds/rig/issues/708',
    'NexForgeCLI 0.4.1 (a terminal agent for DeepSeek, nexforge-cli on PyPI), docs/evidence/session-marker-boundary_report.md §5: a thinking-mode request ending with assistant is rejected with the reasoning_content text',
  ],
  wording: {
    openai: () =>
      'The last message of deepseek-reasoner must be a user message, or an assistant message with prefix mode on (refer to https://api-docs.deepseek.com/guides/chat_prefix_completion).',
    deepseek: (f) =>
      f.facts?.['reasoner'] === 1
        ? 'The last message of deepseek-reasoner must be a user message, or an assistant message with prefix mode on (refer to https://api-docs.deepseek.com/guides/chat_prefix_completion).'
        : 'The reasoning_content in the thinking mode must be passed back to the API.',
    mistral: () => 'Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant',
  },
  finish(context) {
    if (context.scope !== 'request') return;
    if (context.dialect === 'deepseek' && !context.thinking) return;
    const index = context.messages.length - 1;
    const last = context.messages[index];
    if (last?.role === 'assistant' && last.prefix !== true) {
      context.report({
        rule: 'ends-with-assistant',
        index,
        facts: { reasoner: context.model === 'deepseek-reasoner' ? 1 : 0 },
      });
    }
  },
};
