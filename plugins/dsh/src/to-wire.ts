/**
 * Harness messages as DeepSeek receives them, so the core can check what the provider will see.
 * Mirrors `serializeMessages` of `@deepseek-ai/dsh-llm-deepseek` 0.1.0-rc.8: a user message
 * contributes its text first (if any), then each tool-result block as its own `tool` message;
 * an assistant message carries `reasoning_content` when it has reasoning and `tool_calls` when it
 * has tool-call blocks.
 */
import type { Message as WireMessage } from './core.js';
import type { ContentBlock, Message } from './host.js';

export interface WireProjection {
  messages: WireMessage[];
  /** For each wire message, the index of the harness message it came from. */
  origin: number[];
}

function flattenText(blocks: readonly ContentBlock[]): string {
  let text = '';
  for (const block of blocks) if (block.type === 'text') text += block.text;
  return text;
}

export function toWireMessage(message: Message): WireMessage[] {
  if (message.role === 'system') return [{ role: 'system', content: flattenText(message.content) }];
  if (message.role === 'assistant') {
    let reasoning = '';
    const toolCalls = [];
    for (const block of message.content) {
      if (block.type === 'reasoning') reasoning += block.text;
      if (block.type === 'tool-call') {
        toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: block.arguments } });
      }
    }
    return [
      {
        role: 'assistant',
        content: flattenText(message.content),
        ...(reasoning.length > 0 ? { reasoning_content: reasoning } : {}),
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      },
    ];
  }
  const wire: WireMessage[] = [];
  const results = message.content.filter((block) => block.type === 'tool-result');
  const text = flattenText(message.content);
  if (text.length > 0 || results.length === 0) wire.push({ role: 'user', content: text });
  for (const result of results) {
    wire.push({ role: 'tool', tool_call_id: result.toolCallId, content: flattenText(result.content) || '(no output)' });
  }
  return wire;
}

export function toWire(messages: readonly Message[], system?: string): WireProjection {
  const projection: WireProjection = { messages: [], origin: [] };
  if (system !== undefined && system.length > 0) {
    projection.messages.push({ role: 'system', content: system });
    projection.origin.push(-1);
  }
  messages.forEach((message, index) => {
    for (const wire of toWireMessage(message)) {
      projection.messages.push(wire);
      projection.origin.push(index);
    }
  });
  return projection;
}
