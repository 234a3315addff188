import { isEmptyContent } from '../messages.js';
import type { Rule } from './rule.js';

/**
 * Mistral and Moonshot reject an assistant message with neither content nor tool calls, and count
 * '' as no content. (OpenAI accepts ''; null there is `content-null`.)
 */
export const contentEmpty: Rule = {
  id: 'content-empty',
  sources: [
    'CATALOGUE mistral/content-empty: https://github.com/OpenHands/OpenHands/issues/8685',
    'CATALOGUE moonshot/content-empty: https://github.com/labring/FastGPT/issues/3575',
    'corpus 038: https://github.com/jundot/omlx/pull/470',
    'corpus 005 (vLLM: content [] beside tool_calls): https://github.com/0xPlaygrounds/rig/issues/1362',
  ],
  wording: {
    openai: (f) => `Invalid request: the message at position ${f.index} with role 'assistant' must not be empty`,
    mistral: () => 'Assistant message must have either content or tool_calls, but not none.',
    moonshot: (f) => `Invalid request: the message at position ${f.index} with role 'assistant' must not be empty`,
  },
  visit(message, index, context) {
    if (
      context.profile.contentAlwaysRequired === true &&
      Array.isArray(message.content) &&
      message.content.length === 0
    ) {
      context.report({ rule: 'content-empty', index });
      return;
    }
    if (message.role !== 'assistant' || (Array.isArray(message.tool_calls) && message.tool_calls.length > 0)) return;
    if (message.content === null || message.content === undefined) return; // content-null's finding where the profile has it
    if (message.prefix === true) return;
    if (isEmptyContent(message.content)) context.report({ rule: 'content-empty', index });
  },
};
