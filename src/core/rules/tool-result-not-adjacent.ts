import type { Rule } from './rule.js';
import { toolResultOrphan } from './tool-result-orphan.js';

/**
 * Found by the tool-block scan: a tool message answering a call of an earlier assistant message,
 * with something wedged in between (NexForgeCLI's ghost messages, ADK's injected instruction).
 * Providers report it with the orphan wording (CATALOGUE notes), so the wording is the orphan's.
 */
export const toolResultNotAdjacent: Rule = {
  id: 'tool-result-not-adjacent',
  sources: [
    'CATALOGUE openai-chat/tool-result-not-adjacent: https://github.com/ogx-ai/ogx/pull/6367, https://github.com/leookun/cursor-byok/issues/307',
    'NexForgeCLI 0.4.1 (a terminal agent for DeepSeek, nexforge-cli on PyPI): ghost messages wedged between tool_calls and results',
  ],
  wording: toolResultOrphan.wording,
};
