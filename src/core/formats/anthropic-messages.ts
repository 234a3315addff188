import { type Content, isMessage, type Message, type ToolCall } from '../messages.js';
import { SYNTHETIC_RESULT } from '../synthetic-result.js';
import type { Converted } from './format-types.js';
import { argumentsText, isRecord, parseArguments, positionsByOrigin, setTag, tagOf } from './native-tag.js';

/**
 * Anthropic Messages <-> the core's OpenAI-chat model. An assistant message's `tool_use` blocks
 * become its `tool_calls` (arguments = the JSON text of `input`); its other blocks (text,
 * thinking, server tools) stay as content, verbatim. A user message is cut into segments: each
 * `tool_result` block becomes a tool message, each run of other blocks a user message. Every
 * converted message carries its native message, so converting back rebuilds only what changed
 * and returns untouched messages as the very same objects.
 */
export interface AnthropicBlock {
  type: string;
  [key: string]: unknown;
}

export interface AnthropicMessage {
  role: string;
  content: string | AnthropicBlock[];
  [key: string]: unknown;
}

interface MessageTag {
  /** Index of the native message in the array converted. */
  index: number;
  native: Record<string, unknown>;
  segment: number;
  segments: number;
  /** The object conversion made: a message that is still this object is untouched. */
  converted: Message;
  /** For a tool message: its tool_result block. */
  block?: Record<string, unknown>;
}

interface CallTag {
  block: Record<string, unknown>;
}

export function isToolUseBlock(block: unknown): block is Record<string, unknown> {
  return isRecord(block) && block['type'] === 'tool_use';
}

export function isToolResultBlock(block: unknown): block is Record<string, unknown> {
  return isRecord(block) && block['type'] === 'tool_result';
}

export function fromAnthropicMessages(input: readonly unknown[]): Converted<Message> {
  const messages: Message[] = [];
  const origins: number[] = [];
  input.forEach((value, index) => {
    if (!isRecord(value) || typeof value['role'] !== 'string') {
      // Not a message: passed through as it is; the core reports it as malformed.
      messages.push(value as Message);
      origins.push(index);
      return;
    }
    const made = segmentsOf(value);
    made.forEach(({ message, block }, segment) => {
      setTag<Message, MessageTag>(message, {
        index,
        native: value,
        segment,
        segments: made.length,
        converted: message,
        ...(block === undefined ? {} : { block }),
      });
      messages.push(message);
      origins.push(index);
    });
  });
  return { messages, origins };
}

export function toAnthropicMessages(messages: readonly Message[]): unknown[] {
  return buildAnthropicMessages(messages).messages;
}

function segmentsOf(native: Record<string, unknown>): { message: Message; block?: Record<string, unknown> }[] {
  const content = native['content'];
  const role = native['role'] as string;
  if (!Array.isArray(content) || (role !== 'assistant' && role !== 'user'))
    return [{ message: { ...native } as Message }];
  if (role === 'assistant') {
    const message = { ...native } as Message;
    message.content = content.filter((block) => !isToolUseBlock(block)) as Content;
    const calls = content.filter(isToolUseBlock).map(toToolCall);
    if (calls.length > 0) message.tool_calls = calls;
    return [{ message }];
  }
  const made: { message: Message; block?: Record<string, unknown> }[] = [];
  let run: unknown[] | undefined;
  for (const block of content) {
    if (isToolResultBlock(block)) {
      run = undefined;
      const id = block['tool_use_id'];
      made.push({
        message: {
          role: 'tool',
          ...(typeof id === 'string' ? { tool_call_id: id } : {}),
          content: resultContent(block),
        },
        block,
      });
      continue;
    }
    if (run === undefined) {
      run = [];
      made.push({ message: { role: 'user', content: run as Content } });
    }
    run.push(block);
  }
  if (made.length === 0) made.push({ message: { role: 'user', content: [] } });
  return made;
}

function toToolCall(block: Record<string, unknown>): ToolCall {
  const id = block['id'];
  const name = block['name'];
  const call: ToolCall = {
    ...(typeof id === 'string' ? { id } : {}),
    type: 'function',
    function: { ...(typeof name === 'string' ? { name } : {}), arguments: argumentsText(block['input']) },
  };
  return setTag<ToolCall, CallTag>(call, { block });
}

function resultContent(block: Record<string, unknown>): Content {
  const content = block['content'];
  return content === undefined ? '' : (content as Content);
}

type Side = 'user' | 'assistant' | 'other';

function sideOf(message: unknown): Side {
  if (!isMessage(message)) return 'other';
  if (message.role === 'assistant') return 'assistant';
  return message.role === 'user' || message.role === 'tool' ? 'user' : 'other';
}

/**
 * Converted messages back to native ones. Consecutive segments of one native message form it
 * again (rebuilt only when something in them changed); results the repair added join the run of
 * results before them. `sources` names, for each native message out, the index of the native
 * message it was built from (undefined for one made only of added results).
 */
export function buildAnthropicMessages(messages: readonly Message[]): {
  messages: unknown[];
  sources: (number | undefined)[];
  joined: boolean[];
} {
  const groups: Message[][] = [];
  for (const message of messages) {
    const group = groups[groups.length - 1];
    const last = group?.[group.length - 1];
    if (
      group !== undefined &&
      last !== undefined &&
      sideOf(message) !== 'other' &&
      sideOf(last) === sideOf(message) &&
      sameNative(last, message)
    )
      group.push(message);
    else groups.push([message]);
  }
  return {
    messages: groups.map(emitGroup),
    sources: groups.map((group) =>
      group.map((member) => tagOf<MessageTag>(member)?.index).find((index) => index !== undefined),
    ),
    joined: groups.map(
      (group) =>
        group.some((member) => tagOf<MessageTag>(member) === undefined) &&
        group.some((member) => tagOf<MessageTag>(member) !== undefined),
    ),
  };
}

function sameNative(previous: Message, message: Message): boolean {
  const tag = tagOf<MessageTag>(message);
  const previousTag = tagOf<MessageTag>(previous);
  if (tag !== undefined && previousTag !== undefined) return tag.index === previousTag.index;
  return message.role === 'tool' && previous.role === 'tool';
}

function emitGroup(members: Message[]): unknown {
  const first = members[0] as Message;
  const tag = tagOf<MessageTag>(first);
  if (
    tag !== undefined &&
    members.length === tag.segments &&
    members.every(
      (member, segment) =>
        tagOf<MessageTag>(member)?.converted === member &&
        tagOf<MessageTag>(member)?.segment === segment &&
        tagOf<MessageTag>(member)?.index === tag.index,
    )
  ) {
    return tag.native;
  }
  const side = sideOf(first);
  if (side === 'other') return isMessage(first) ? plain(first) : first;
  const base = members.map((member) => tagOf<MessageTag>(member)?.native).find((native) => native !== undefined) ?? {};
  if (
    members.length === 1 &&
    typeof first.content === 'string' &&
    !(Array.isArray(first.tool_calls) && first.tool_calls.length > 0) &&
    first.role !== 'tool'
  ) {
    return { ...base, role: side, content: first.content };
  }
  return { ...base, role: side, content: members.flatMap(blocksOf) };
}

function plain(message: Message): Record<string, unknown> {
  return Object.fromEntries(Object.entries(message));
}

function blocksOf(message: Message): unknown[] {
  if (message.role === 'tool') return [resultBlock(message)];
  if (message.role !== 'assistant') return contentBlocks(message.content);
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const uses = calls.map(toolUseBlock);
  const tag = tagOf<MessageTag>(message);
  const nativeContent = tag?.native['content'];
  if (tag === undefined || message.content !== tag.converted.content || !Array.isArray(nativeContent))
    return [...contentBlocks(message.content), ...uses];
  // The content is as it came: put the calls back where their blocks stood.
  const out: unknown[] = [];
  const used = new Set<number>();
  const positions = positionsByOrigin(calls, (call) => tagOf<CallTag>(call)?.block);
  for (const block of nativeContent) {
    if (!isToolUseBlock(block)) {
      out.push(block);
      continue;
    }
    const position = positions.take(block);
    if (position < 0) continue; // the call was removed
    used.add(position);
    out.push(uses[position]);
  }
  uses.forEach((use, index) => {
    if (!used.has(index)) out.push(use);
  });
  return out;
}

function contentBlocks(content: Message['content'] | undefined): unknown[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return Array.isArray(content) ? content : [];
}

function toolUseBlock(call: ToolCall): Record<string, unknown> {
  const block = tagOf<CallTag>(call)?.block;
  const name = call.function?.name;
  const args = call.function?.arguments;
  if (block === undefined) return { type: 'tool_use', id: call.id, name, input: parseArguments(args) };
  if (call.id === block['id'] && name === block['name'] && args === argumentsText(block['input'])) return block;
  return {
    ...block,
    id: call.id,
    name,
    input: args === argumentsText(block['input']) ? block['input'] : parseArguments(args),
  };
}

function resultBlock(message: Message): Record<string, unknown> {
  const block = tagOf<MessageTag>(message)?.block;
  if (block === undefined) {
    return {
      type: 'tool_result',
      tool_use_id: message.tool_call_id,
      content: message.content ?? '',
      ...(message.content === SYNTHETIC_RESULT ? { is_error: true } : {}),
    };
  }
  if (block['tool_use_id'] === message.tool_call_id && message.content === resultContent(block)) return block;
  return { ...block, tool_use_id: message.tool_call_id, content: message.content };
}
