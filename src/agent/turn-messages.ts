import { randomUUID } from 'node:crypto';
import type { Message, ToolCall } from '../core/index.js';
import { textOf } from '../core/index.js';
import type { Completion } from './stream-completion.js';

/** The assistant message as it is kept: thinking mode keeps reasoning_content ('' rather than absent). */
export function toAssistantMessage(completion: Completion, thinking: boolean): Message {
  const calls: ToolCall[] = completion.toolCalls.map((call) => ({
    id: call.id ?? `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
  const message: Message = {
    role: 'assistant',
    content: calls.length > 0 && completion.text === '' ? null : completion.text,
  };
  if (thinking) message.reasoning_content = completion.reasoning ?? '';
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

/**
 * The system prompt goes first. Where only one system message may lead the request and the history
 * already starts with one, the two are sent as one (the saved history is not touched).
 */
export function withSystemPrompt(
  messages: readonly Message[],
  prompt: string | undefined,
  systemFirstOnly: boolean,
): readonly Message[] {
  if (prompt === undefined) return messages;
  const first = messages[0];
  if (systemFirstOnly && first?.role === 'system')
    return [{ ...first, content: `${prompt}\n\n${textOf(first.content)}` }, ...messages.slice(1)];
  return [{ role: 'system', content: prompt }, ...messages];
}

/** Index of the last user message, -1 when there is none. */
export function lastUserIndex(messages: readonly Message[]): number {
  for (let index = messages.length - 1; index >= 0; index -= 1) if (messages[index]?.role === 'user') return index;
  return -1;
}
