import type { Message } from '../../src/index.js';

/**
 * The same history in each peer's own message format, so each function meets its native input.
 *
 * - Mastra's `sanitizeOrphanedToolPairs` takes AI SDK v5 ModelMessages: an assistant's calls are
 *   `tool-call` parts of its content, and the results answering it are `tool-result` parts of the
 *   ONE tool message after it (consecutive chat tool messages are grouped, as the AI SDK writes them).
 * - pi-ai's `transformMessages` takes pi-ai Messages: `toolCall` blocks in the assistant's content,
 *   one `toolResult` message per result; the system prompt is not a message there.
 */
export function toModelMessages(messages: readonly Message[]): unknown[] {
  const out: Record<string, unknown>[] = [];
  for (const message of messages) {
    if (message.role === 'tool') {
      const part = {
        type: 'tool-result',
        toolCallId: message.tool_call_id,
        toolName: message.name ?? 'tool',
        output: { type: 'text', value: typeof message.content === 'string' ? message.content : '' },
      };
      const previous = out[out.length - 1];
      if (previous?.['role'] === 'tool') (previous['content'] as unknown[]).push(part);
      else out.push({ role: 'tool', content: [part] });
      continue;
    }
    if (message.role === 'assistant') {
      const content: unknown[] = [];
      if (typeof message.reasoning_content === 'string' && message.reasoning_content !== '')
        content.push({ type: 'reasoning', text: message.reasoning_content });
      if (typeof message.content === 'string' && message.content !== '')
        content.push({ type: 'text', text: message.content });
      for (const call of message.tool_calls ?? [])
        content.push({
          type: 'tool-call',
          toolCallId: call.id,
          toolName: call.function?.name,
          input: JSON.parse(call.function?.arguments ?? '{}'),
        });
      out.push({ role: 'assistant', content });
      continue;
    }
    out.push({ role: message.role, content: typeof message.content === 'string' ? message.content : '' });
  }
  return out;
}

export const PI_MODEL = {
  id: 'deepseek-chat',
  name: 'DeepSeek Chat',
  api: 'openai-completions',
  provider: 'deepseek',
  input: ['text', 'image'],
};

export function toPiMessages(messages: readonly Message[]): unknown[] {
  const out: unknown[] = [];
  let timestamp = 1_764_000_000_000;
  for (const message of messages) {
    timestamp += 1000;
    if (message.role === 'system') continue;
    if (message.role === 'tool') {
      out.push({
        role: 'toolResult',
        toolCallId: message.tool_call_id,
        toolName: message.name ?? 'tool',
        content: [{ type: 'text', text: typeof message.content === 'string' ? message.content : '' }],
        isError: false,
        timestamp,
      });
      continue;
    }
    if (message.role === 'assistant') {
      const content: unknown[] = [];
      if (typeof message.reasoning_content === 'string' && message.reasoning_content !== '')
        content.push({ type: 'thinking', thinking: message.reasoning_content });
      if (typeof message.content === 'string' && message.content !== '')
        content.push({ type: 'text', text: message.content });
      for (const call of message.tool_calls ?? [])
        content.push({
          type: 'toolCall',
          id: call.id,
          name: call.function?.name,
          arguments: JSON.parse(call.function?.arguments ?? '{}'),
        });
      out.push({
        role: 'assistant',
        content,
        api: PI_MODEL.api,
        provider: PI_MODEL.provider,
        model: PI_MODEL.id,
        usage: {
          input: 0,
          output: 0,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 0,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: (message.tool_calls ?? []).length > 0 ? 'toolUse' : 'stop',
        timestamp,
      });
      continue;
    }
    out.push({ role: 'user', content: typeof message.content === 'string' ? message.content : '', timestamp });
  }
  return out;
}

/**
 * The floor: a minimal one-pass validator of the chat format. One visit per message
 * and per tool call, no allocation on the valid path: an assistant message with calls opens a
 * block, the tool messages right after it must each answer a distinct call of it, and the block
 * must be whole when it closes. Returns the number of problems found.
 */
export function minimalValidator(messages: readonly Message[]): number {
  let problems = 0;
  let owner: Message | undefined;
  let owed = 0;
  for (let index = 0; index < messages.length; index += 1) {
    const message = messages[index] as Message;
    if (message === null || typeof message !== 'object' || typeof message.role !== 'string') {
      problems += 1;
      continue;
    }
    if (message.role === 'tool') {
      const calls = owner?.tool_calls;
      if (calls === undefined || owed === 0) {
        problems += 1;
        continue;
      }
      let found = false;
      for (let call = 0; call < calls.length; call += 1) if (calls[call]?.id === message.tool_call_id) found = true;
      if (!found) problems += 1;
      owed -= 1;
      continue;
    }
    if (owed > 0) problems += 1;
    owner = undefined;
    owed = 0;
    if (message.role === 'assistant' && message.tool_calls !== undefined) {
      owner = message;
      owed = message.tool_calls.length;
      for (let call = 0; call < owed; call += 1) if (typeof message.tool_calls[call]?.id !== 'string') problems += 1;
    }
  }
  if (owed > 0) problems += 1;
  return problems;
}
