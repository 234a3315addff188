import { hasToolCalls, isMessage } from '../messages.js';
import type { Rule } from './rule.js';

/**
 * Thinking mode (DeepSeek V3.2+/V4, Kimi thinking models): an assistant message of a turn that
 * called tools must carry `reasoning_content` when sent back ('' is accepted, a missing key is
 * not). The catalogue's safe reading, used here: every assistant message of a user turn that made
 * tool calls, and in a request every assistant message after the last user message.
 */
export const reasoningContentMissing: Rule = {
  id: 'reasoning-content-missing',
  sources: [
    'CATALOGUE deepseek/reasoning-content-missing: https://api-docs.deepseek.com/guides/thinking_mode, https://github.com/hotovo/aider-desk/issues/529',
    'CATALOGUE moonshot/reasoning-content-missing: https://github.com/bytedance/deer-flow/issues/3043',
    'corpus 025, 026 (test/fixtures/shared/corpus); NexForgeCLI 0.4.1 (a terminal agent for DeepSeek, nexforge-cli on PyPI), docs/evidence/session-marker-boundary_report.md §5',
  ],
  wording: {
    openai: (f) =>
      `Missing \`reasoning_content\` field in the assistant message at message index ${f.index}. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls`,
    moonshot: (f) =>
      `thinking is enabled but reasoning_content is missing in assistant tool call message at index ${f.index}`,
  },
  finish(context) {
    if (!context.thinking) return;
    const messages = context.messages;
    // Walk turn by turn (a turn = the messages after one user message up to the next).
    let turnStart = 0;
    for (let index = 0; index <= messages.length; index += 1) {
      const message = messages[index];
      if (index < messages.length && !(isMessage(message) && message.role === 'user')) continue; // an entry that is no message (message-malformed) ends no turn
      reportTurn(context, turnStart, index);
      turnStart = index + 1;
    }
  },
};

function reportTurn(context: Parameters<NonNullable<Rule['finish']>>[0], start: number, end: number): void {
  const messages = context.messages;
  let calledTools = false;
  for (let index = start; index < end; index += 1) {
    const message = messages[index];
    if (isMessage(message) && hasToolCalls(message)) {
      calledTools = true;
      break;
    }
  }
  const afterLastUser = context.scope === 'request' && start > context.lastUserIndex;
  if (!calledTools && !afterLastUser) return;
  for (let index = start; index < end; index += 1) {
    const message = messages[index];
    if (!isMessage(message) || message.role !== 'assistant') continue;
    if (context.dialect === 'moonshot' && !hasToolCalls(message)) continue;
    if (typeof message.reasoning_content !== 'string') context.report({ rule: 'reasoning-content-missing', index });
  }
}
