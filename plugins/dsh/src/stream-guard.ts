/**
 * The `llm/stream` handler's work: every request is checked with the core before it reaches the
 * adapter. A loop-built request is deep-frozen and must equal `session.deriveMessages()` (the
 * agent-loop invariant), so it is only warned about — the other handlers fix the session instead. A
 * request that is not frozen (compaction's summary request is the one the harness builds) is
 * repaired in place. The stream coming back is passed through, except that a tool call whose
 * id arrived empty gets a stable id.
 */

import type { GenerateOptions, StreamChunk } from '@deepseek-ai/dsh-llm';
import {
  type CallId,
  createMessage,
  createToolResultMessage,
  createUserMessage,
  isAgentLoopRequest,
} from '@deepseek-ai/dsh-llm';
import { PLUGIN_SOURCE } from './apply-edits.js';
import { check, repair, type Violation, type Message as WireMessage } from './core.js';
import type { ContentBlock, Message } from './host.js';
import { stableCallId } from './stable-id.js';
import { toWire } from './to-wire.js';

export interface StreamReport {
  readonly purpose: string;
  readonly frozen: boolean;
  readonly violations: readonly Violation[];
  readonly repaired: boolean;
}

function wireText(content: WireMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (typeof part.text === 'string' ? part.text : '')).join('');
}

/** Harness messages for a repaired wire history: untouched harness messages are reused as they are. */
export function fromWire(
  repaired: readonly WireMessage[],
  original: readonly Message[],
  projection: { messages: WireMessage[]; origin: number[] },
  options: GenerateOptions,
): Message[] {
  const originOf = new Map<WireMessage, number>();
  for (const [index, wire] of projection.messages.entries()) originOf.set(wire, projection.origin[index]!);
  const expected = new Map<number, number>();
  for (const origin of projection.origin) expected.set(origin, (expected.get(origin) ?? 0) + 1);
  const intact = new Map<number, number>();
  for (const wire of repaired) {
    const origin = originOf.get(wire);
    if (origin !== undefined) intact.set(origin, (intact.get(origin) ?? 0) + 1);
  }
  const messages: Message[] = [];
  const emitted = new Set<number>();
  for (const wire of repaired) {
    const origin = originOf.get(wire);
    if (origin !== undefined && origin >= 0 && intact.get(origin) === expected.get(origin)) {
      if (!emitted.has(origin)) messages.push(original[origin]!);
      emitted.add(origin);
      continue;
    }
    if (origin === -1) continue; // the system prompt travels in `options.system`, not in messages
    const text = wireText(wire.content);
    if (wire.role === 'assistant') {
      const content: ContentBlock[] = [];
      if (typeof wire.reasoning_content === 'string' && wire.reasoning_content.length > 0)
        content.push({ type: 'reasoning', text: wire.reasoning_content });
      if (text.length > 0) content.push({ type: 'text', text });
      for (const call of wire.tool_calls ?? []) {
        content.push({
          type: 'tool-call',
          id: (call.id ?? '') as CallId,
          name: call.function?.name ?? '',
          arguments: call.function?.arguments ?? '',
        });
      }
      messages.push(
        createMessage({
          role: 'assistant',
          content,
          source: { kind: 'model', provider: options.provider, model: options.model },
        }),
      );
    } else if (wire.role === 'tool') {
      messages.push(
        createToolResultMessage({
          callId: (wire.tool_call_id ?? '') as CallId,
          content: [{ type: 'text', text }],
          isError: false,
        }),
      );
    } else if (wire.role === 'system') {
      messages.push(createMessage({ role: 'system', content: [{ type: 'text', text }], source: PLUGIN_SOURCE }));
    } else {
      messages.push(createUserMessage({ content: [{ type: 'text', text }], source: PLUGIN_SOURCE }));
    }
  }
  return messages;
}

/** Check (and, when the request is ours to change, repair) one request. Never throws. */
export function guardRequest(options: GenerateOptions): StreamReport {
  const frozen = Object.isFrozen(options) || isAgentLoopRequest(options);
  const purpose = options.purpose ?? (frozen ? 'loop' : 'other');
  const projection = toWire(options.messages, options.system);
  const checkOptions = { profile: 'deepseek' as const, scope: 'request' as const, model: options.model };
  const violations = check(projection.messages, checkOptions);
  if (violations.length === 0 || frozen) return { purpose, frozen, violations, repaired: false };
  const result = repair(projection.messages, checkOptions);
  if (!result.changed) return { purpose, frozen, violations, repaired: false };
  const messages = fromWire(result.messages, options.messages, projection, options);
  if (Object.isFrozen(options.messages)) {
    (options as { messages: Message[] }).messages = messages;
  } else {
    options.messages.splice(0, options.messages.length, ...messages);
  }
  return { purpose, frozen, violations, repaired: true };
}

/** The stream with stable ids for tool calls whose id arrived empty. */
export async function* withStableIds(stream: AsyncIterable<StreamChunk>, key: string): AsyncIterable<StreamChunk> {
  const seen = new Map<number, string>();
  const idFor = (index: number): string => {
    let id = seen.get(index);
    if (id === undefined) {
      id = stableCallId(key, index);
      seen.set(index, id);
    }
    return id;
  };
  for await (const chunk of stream) {
    if (chunk.type === 'tool-call-delta') {
      if (chunk.id) {
        if (!seen.has(chunk.index)) seen.set(chunk.index, chunk.id);
        yield chunk;
      } else {
        yield { ...chunk, id: idFor(chunk.index) as CallId };
      }
    } else if (chunk.type === 'block-end' && chunk.block.type === 'tool-call' && !chunk.block.id) {
      yield { ...chunk, block: { ...chunk.block, id: idFor(chunk.index) as CallId } };
    } else {
      yield chunk;
    }
  }
}

/** The key a request's stable ids derive from: its session and how much history precedes the answer. */
export function streamKey(options: GenerateOptions): string {
  return `${options.sessionId ?? ''}:${options.purpose ?? ''}:${options.messages.length}`;
}
