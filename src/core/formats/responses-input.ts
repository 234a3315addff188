import { type Content, isMessage, type Message, type ToolCall } from '../messages.js';
import type { Converted } from './format-types.js';
import { isRecord, setTag, tagOf } from './native-tag.js';

/**
 * OpenAI Responses `input` items <-> the core's OpenAI-chat model. Message items (with or without
 * `type: 'message'`) become messages; a run of function_call items becomes one assistant message
 * with those tool_calls (arguments are already JSON text); a function_call_output becomes a tool
 * message. Items chat has no place for (reasoning, web_search_call, item_reference...) become a
 * message with role `item:<type>`, carried verbatim: the chat profiles reject that role, which is
 * the truth — chat cannot express them.
 */
export type ResponsesItem = Record<string, unknown>;

interface ItemTag {
  index: number;
  /** The native items this message came from (several for a run of function_call items). */
  items: ResponsesItem[];
  converted: Message;
  content?: unknown;
}

interface CallTag {
  item: ResponsesItem;
}

export function isMessageItem(item: unknown): item is ResponsesItem {
  return (
    isRecord(item) && (item['type'] === 'message' || (item['type'] === undefined && typeof item['role'] === 'string'))
  );
}

export function itemType(item: unknown): string {
  if (isMessageItem(item)) return 'message';
  return isRecord(item) && typeof item['type'] === 'string' ? item['type'] : '';
}

export function fromResponsesInput(input: readonly unknown[]): Converted<Message> {
  const messages: Message[] = [];
  const origins: number[] = [];
  const push = (message: Message, index: number, items: ResponsesItem[], extra: Partial<ItemTag> = {}) => {
    setTag<Message, ItemTag>(message, { index, items, converted: message, ...extra });
    messages.push(message);
    origins.push(index);
  };
  for (let index = 0; index < input.length; index += 1) {
    const item = input[index];
    const type = itemType(item);
    if (!isRecord(item) || type === '') {
      messages.push(item as Message);
      origins.push(index);
      continue;
    }
    if (type === 'message') {
      push({ ...item, role: typeof item['role'] === 'string' ? item['role'] : 'user' } as Message, index, [item]);
    } else if (type === 'function_call') {
      const start = index;
      const items: ResponsesItem[] = [item];
      while (itemType(input[index + 1]) === 'function_call') {
        index += 1;
        items.push(input[index] as ResponsesItem);
      }
      push({ role: 'assistant', content: null, tool_calls: items.map(toToolCall) }, start, items);
    } else if (type === 'function_call_output') {
      const id = item['call_id'];
      const output = item['output'];
      push(
        { role: 'tool', ...(typeof id === 'string' ? { tool_call_id: id } : {}), content: (output ?? '') as Content },
        index,
        [item],
        { content: output ?? '' },
      );
    } else {
      push({ role: `item:${type}`, content: null }, index, [item]);
    }
  }
  return { messages, origins };
}

function toToolCall(item: ResponsesItem): ToolCall {
  const id = item['call_id'];
  const name = item['name'];
  const args = item['arguments'];
  const call: ToolCall = {
    ...(typeof id === 'string' ? { id } : {}),
    type: 'function',
    function: {
      ...(typeof name === 'string' ? { name } : {}),
      arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
    },
  };
  return setTag<ToolCall, CallTag>(call, { item });
}

export function toResponsesInput(messages: readonly Message[]): unknown[] {
  return messages.flatMap(toItems);
}

function toItems(message: Message): unknown[] {
  if (!isMessage(message)) return [message];
  const tag = tagOf<ItemTag>(message);
  if (tag !== undefined && tag.converted === message) return tag.items;
  const native = tag?.items[0];
  if (message.role === 'tool') {
    const output = message.content === tag?.content ? native?.['output'] : message.content;
    return [{ ...(native ?? { type: 'function_call_output' }), call_id: message.tool_call_id, output }];
  }
  if (message.role.startsWith('item:') && native !== undefined) return [native];
  const items: unknown[] = [];
  const calls = message.role === 'assistant' && Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const hasText = !(
    message.content === null ||
    message.content === undefined ||
    (Array.isArray(message.content) && message.content.length === 0 && calls.length > 0)
  );
  if (hasText || calls.length === 0) {
    const { tool_calls: _calls, ...rest } = message;
    const base = native !== undefined && isMessageItem(native) ? native : { type: 'message' };
    items.push({ ...base, ...Object.fromEntries(Object.entries(rest)) });
  }
  for (const call of calls) {
    const item = tagOf<CallTag>(call)?.item;
    const changed =
      item === undefined ||
      item['call_id'] !== call.id ||
      item['name'] !== call.function?.name ||
      item['arguments'] !== call.function?.arguments;
    items.push(
      changed
        ? {
            ...(item ?? { type: 'function_call' }),
            call_id: call.id,
            name: call.function?.name,
            arguments: call.function?.arguments,
          }
        : item,
    );
  }
  return items;
}
