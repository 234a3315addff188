import { hasToolCalls } from '../messages.js';
import type { Rule } from './rule.js';

/** content may be null or absent only on an assistant message that carries tool calls. */
export const contentNull: Rule = {
  id: 'content-null',
  sources: [
    'CATALOGUE openai-chat/content-null: https://github.com/langchain-ai/langchainjs/issues/4153, https://github.com/docker/docker-agent/issues/63',
    'CATALOGUE dashscope/content-null: https://github.com/QwenLM/qwen-code/issues/5265',
    'CATALOGUE groq/content-null: https://github.com/tidyverse/ellmer/issues/162',
    'corpus 007: https://github.com/github/copilot-sdk/issues/2469',
    'corpus 037 (Ollama rejects null content even with tool_calls): https://github.com/SAIL-Research-Lab/cheetahclaws/pull/72',
  ],
  wording: {
    openai: () => "Invalid value for 'content': expected a string, got null.",
    qwen: () => '<400> InternalError.Algo.InvalidParameter: The content field is a required field.',
    groq: (f) =>
      `'messages.${f.index}' : for 'role:${String(f.facts?.['role'] ?? 'assistant')}' the following must be satisfied[('messages.${f.index}.content' : value must be a string)]`,
  },
  visit(message, index, context) {
    if (
      context.profile.assistantContentString === true &&
      message.role === 'assistant' &&
      Array.isArray(message.content)
    ) {
      context.report({ rule: 'content-null', index, facts: { role: message.role } });
      return;
    }
    if (message.content !== null && message.content !== undefined) return;
    if (
      message.role === 'assistant' &&
      (hasToolCalls(message) || 'function_call' in message) &&
      context.profile.contentAlwaysRequired !== true
    )
      return;
    context.report({ rule: 'content-null', index, facts: { role: message.role } });
  },
};
