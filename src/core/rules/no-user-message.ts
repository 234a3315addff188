import type { Rule } from './rule.js';

/** DashScope (and Qwen templates): a request must contain at least one user message. */
export const noUserMessage: Rule = {
  id: 'no-user-message',
  sources: [
    'CATALOGUE dashscope/no-user-message: https://github.com/agentscope-ai/agentscope-java/issues/613',
    'CATALOGUE hf-chat-template/no-user-message: https://github.com/vllm-project/vllm/issues/36432',
  ],
  wording: {
    openai: () => 'No user query found in messages.',
    qwen: () =>
      '<400> InternalError.Algo.InvalidParameter: The input messages do not contain elements with the role of user',
  },
  finish(context) {
    if (context.scope === 'request' && context.messages.length > 0 && context.lastUserIndex === -1)
      context.report({ rule: 'no-user-message', index: 0 });
  },
};
