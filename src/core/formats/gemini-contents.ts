import { type Content, isMessage, type Message, type ToolCall } from '../messages.js';
import { SYNTHETIC_RESULT } from '../synthetic-result.js';
import type { Converted } from './format-types.js';
import { argumentsText, isRecord, parseArguments, positionsByOrigin, setTag, tagOf } from './native-tag.js';

/**
 * Gemini `contents` <-> the core's OpenAI-chat model. A model turn's functionCall parts become its
 * tool_calls (arguments = the JSON text of `args`); its other parts (text, thought, signatures)
 * stay as content, verbatim. A user turn is cut into segments: each functionResponse part becomes
 * a tool message, each run of other parts a user message. Both the REST names (functionCall) and
 * the Python SDK's (function_call) are read, and written back as they came.
 *
 * Gemini pairs calls and responses by count and order; ids are optional. A call without an id
 * gets one for the conversion only (never written back), and a response without one takes the id
 * of the call it answers: the first unanswered call of the turn before with the same name, or else
 * the first unanswered call.
 */
export type GeminiPart = Record<string, unknown>;

export interface GeminiContent {
  role?: string;
  parts: GeminiPart[];
  [key: string]: unknown;
}

interface ContentTag {
  index: number;
  native: Record<string, unknown>;
  segment: number;
  segments: number;
  converted: Message;
  /** For a tool message: its functionResponse part. */
  response?: PartTag;
}

interface PartTag {
  part: GeminiPart;
  key: string;
  /** The id used in the conversion; `nativeId` says whether the part carried it. */
  id: string;
  nativeId: boolean;
}

const CALL_KEYS = ['functionCall', 'function_call'] as const;
const RESPONSE_KEYS = ['functionResponse', 'function_response'] as const;

/** The functionCall (or function_call) object of a part, and under which name it came. */
export function callOf(part: unknown): { key: string; call: Record<string, unknown> } | undefined {
  if (!isRecord(part)) return undefined;
  for (const key of CALL_KEYS) if (isRecord(part[key])) return { key, call: part[key] };
  return undefined;
}

export function responseOf(part: unknown): { key: string; response: Record<string, unknown> } | undefined {
  if (!isRecord(part)) return undefined;
  for (const key of RESPONSE_KEYS) if (isRecord(part[key])) return { key, response: part[key] };
  return undefined;
}

/** The role a content plays: an absent role is the user's (the API's default). */
export function roleOf(content: Record<string, unknown>): unknown {
  return content['role'] === undefined ? 'user' : content['role'];
}

export function fromGeminiContents(input: readonly unknown[]): Converted<Message> {
  const messages: Message[] = [];
  const origins: number[] = [];
  // The calls of the model turn just converted, for pairing the next turn's responses without ids.
  let open = openCalls([]);
  input.forEach((value, index) => {
    const role = isRecord(value) ? roleOf(value) : undefined;
    if (!isRecord(value) || typeof role !== 'string') {
      messages.push(value as Message);
      origins.push(index);
      open = openCalls([]);
      return;
    }
    const made: { message: Message; response?: PartTag }[] =
      role === 'model'
        ? [modelTurn(value, index)]
        : role === 'user'
          ? userTurn(value, index, open)
          : [{ message: { ...value, role } as Message }];
    open = openCalls(role === 'model' ? (made[0]?.message.tool_calls ?? []) : []);
    made.forEach(({ message, response }, segment) => {
      setTag<Message, ContentTag>(message, {
        index,
        native: value,
        segment,
        segments: made.length,
        converted: message,
        ...(response === undefined ? {} : { response }),
      });
      messages.push(message);
      origins.push(index);
    });
  });
  return { messages, origins };
}

export function toGeminiContents(messages: readonly Message[]): unknown[] {
  return buildGeminiContents(messages).messages;
}

function modelTurn(native: Record<string, unknown>, index: number): { message: Message; response?: PartTag } {
  const parts = Array.isArray(native['parts']) ? (native['parts'] as unknown[]) : [];
  const { parts: _parts, ...rest } = native;
  const message: Message = {
    ...rest,
    role: 'assistant',
    content: parts.filter((part) => callOf(part) === undefined) as Content,
  };
  const calls: ToolCall[] = [];
  parts.forEach((part, position) => {
    const found = callOf(part);
    if (found === undefined) return;
    const nativeId = typeof found.call['id'] === 'string' && found.call['id'] !== '';
    const id = nativeId ? (found.call['id'] as string) : `gemini_call_${index}_${position}`;
    const name = found.call['name'];
    const call: ToolCall = {
      id,
      type: 'function',
      function: { ...(typeof name === 'string' ? { name } : {}), arguments: argumentsText(found.call['args']) },
    };
    calls.push(setTag<ToolCall, PartTag>(call, { part: part as GeminiPart, key: found.key, id, nativeId }));
  });
  if (calls.length > 0) message.tool_calls = calls;
  return { message };
}

interface OpenCall {
  name: string;
  id: string;
  answered: boolean;
}

interface OpenQueue {
  calls: OpenCall[];
  next: number;
}

/**
 * The calls of a model turn, for the responses of the turn after it: the first unanswered call with
 * an id, with a name, or of all. Calls are answered first unanswered first within each queue, so each
 * queue's cursor only moves forward and a turn of 10^5 responses pairs in linear time.
 */
function openCalls(toolCalls: readonly ToolCall[]) {
  const all: OpenQueue = { calls: [], next: 0 };
  const byId = new Map<string, OpenQueue>();
  const byName = new Map<string, OpenQueue>();
  const add = (map: Map<string, OpenQueue>, key: string, call: OpenCall) => {
    const queue = map.get(key);
    if (queue === undefined) map.set(key, { calls: [call], next: 0 });
    else queue.calls.push(call);
  };
  for (const toolCall of toolCalls) {
    const call: OpenCall = { name: toolCall.function?.name ?? '', id: toolCall.id ?? '', answered: false };
    all.calls.push(call);
    add(byId, call.id, call);
    add(byName, call.name, call);
  }
  const first = (queue: OpenQueue | undefined) => {
    if (queue === undefined) return undefined;
    while (queue.next < queue.calls.length && (queue.calls[queue.next] as OpenCall).answered) queue.next += 1;
    return queue.calls[queue.next];
  };
  return {
    withId: (id: string) => first(byId.get(id)),
    withName: (name: string) => first(byName.get(name)),
    any: () => first(all),
  };
}

function userTurn(
  native: Record<string, unknown>,
  index: number,
  open: ReturnType<typeof openCalls>,
): { message: Message; response?: PartTag }[] {
  const parts = Array.isArray(native['parts']) ? (native['parts'] as unknown[]) : [];
  const made: { message: Message; response?: PartTag }[] = [];
  let run: unknown[] | undefined;
  parts.forEach((part, position) => {
    const found = responseOf(part);
    if (found === undefined) {
      if (run === undefined) {
        run = [];
        made.push({ message: { role: 'user', content: run as Content } });
      }
      run.push(part);
      return;
    }
    run = undefined;
    const name = typeof found.response['name'] === 'string' ? found.response['name'] : '';
    const nativeId = typeof found.response['id'] === 'string' && found.response['id'] !== '';
    let id: string;
    if (nativeId) {
      id = found.response['id'] as string;
      const answered = open.withId(id);
      if (answered !== undefined) answered.answered = true;
    } else {
      const call = open.withName(name) ?? open.any();
      if (call !== undefined) call.answered = true;
      id = call?.id ?? `gemini_result_${index}_${position}`;
    }
    const message: Message = {
      role: 'tool',
      tool_call_id: id,
      ...(name === '' ? {} : { name }),
      content: argumentsText(found.response['response']),
    };
    made.push({ message, response: { part: part as GeminiPart, key: found.key, id, nativeId } });
  });
  if (made.length === 0) made.push({ message: { role: 'user', content: [] } });
  return made;
}

type Side = 'user' | 'model' | 'other';

function sideOf(message: unknown): Side {
  if (!isMessage(message)) return 'other';
  if (message.role === 'assistant') return 'model';
  return message.role === 'user' || message.role === 'tool' ? 'user' : 'other';
}

/** Converted messages back to contents; see buildAnthropicMessages for how segments regroup. */
export function buildGeminiContents(messages: readonly Message[]): {
  messages: unknown[];
  sources: (number | undefined)[];
  joined: boolean[];
} {
  const groups: Message[][] = [];
  const calls = new Map<string, { name: string; key: string; nativeId: boolean }>();
  for (const message of messages) {
    if (isMessage(message) && message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) {
        const tag = tagOf<PartTag>(call);
        if (typeof call?.id === 'string')
          calls.set(call.id, {
            name: call.function?.name ?? '',
            key: tag?.key === 'function_call' ? 'function_response' : 'functionResponse',
            nativeId: tag === undefined || tag.nativeId || tag.id !== call.id,
          });
      }
    }
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
    messages: groups.map((group) => emitGroup(group, calls)),
    sources: groups.map((group) =>
      group.map((member) => tagOf<ContentTag>(member)?.index).find((index) => index !== undefined),
    ),
    joined: groups.map(
      (group) =>
        group.some((member) => tagOf<ContentTag>(member) === undefined) &&
        group.some((member) => tagOf<ContentTag>(member) !== undefined),
    ),
  };
}

function sameNative(previous: Message, message: Message): boolean {
  const tag = tagOf<ContentTag>(message);
  const previousTag = tagOf<ContentTag>(previous);
  if (tag !== undefined && previousTag !== undefined) return tag.index === previousTag.index;
  return message.role === 'tool' && previous.role === 'tool';
}

function emitGroup(members: Message[], calls: Map<string, { name: string; key: string; nativeId: boolean }>): unknown {
  const first = members[0] as Message;
  const tag = tagOf<ContentTag>(first);
  if (
    tag !== undefined &&
    members.length === tag.segments &&
    members.every(
      (member, segment) =>
        tagOf<ContentTag>(member)?.converted === member &&
        tagOf<ContentTag>(member)?.segment === segment &&
        tagOf<ContentTag>(member)?.index === tag.index,
    )
  ) {
    return tag.native;
  }
  const side = sideOf(first);
  if (side === 'other') return isMessage(first) ? Object.fromEntries(Object.entries(first)) : first;
  const base = members.map((member) => tagOf<ContentTag>(member)?.native).find((native) => native !== undefined);
  const parts = members.flatMap((member) => partsOf(member, calls));
  const content: Record<string, unknown> = { ...(base ?? {}), parts };
  if (side === 'model' || base === undefined || base['role'] !== undefined) content['role'] = side;
  return content;
}

function partsOf(message: Message, calls: Map<string, { name: string; key: string; nativeId: boolean }>): unknown[] {
  if (message.role === 'tool') return [responsePart(message, calls)];
  if (message.role !== 'assistant') return contentParts(message.content);
  const toolCalls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const callParts = toolCalls.map(callPart);
  const tag = tagOf<ContentTag>(message);
  const nativeParts = tag?.native['parts'];
  if (tag === undefined || message.content !== tag.converted.content || !Array.isArray(nativeParts))
    return [...contentParts(message.content), ...callParts];
  const out: unknown[] = [];
  const used = new Set<number>();
  const positions = positionsByOrigin(toolCalls, (call) => tagOf<PartTag>(call)?.part);
  for (const part of nativeParts) {
    if (callOf(part) === undefined) {
      out.push(part);
      continue;
    }
    const position = positions.take(part);
    if (position < 0) continue;
    used.add(position);
    out.push(callParts[position]);
  }
  callParts.forEach((part, index) => {
    if (!used.has(index)) out.push(part);
  });
  return out;
}

/** Text the repair wrote (a string, or `{ type: 'text', text }` parts) as Gemini text parts. */
function contentParts(content: Content | undefined): unknown[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (!Array.isArray(content)) return [];
  return content.map((part) =>
    isRecord(part) && part['type'] === 'text' && Object.keys(part).length === 2 && typeof part['text'] === 'string'
      ? { text: part['text'] }
      : part,
  );
}

function callPart(call: ToolCall): unknown {
  const tag = tagOf<PartTag>(call);
  const name = call.function?.name;
  const args = call.function?.arguments;
  if (tag === undefined) return { functionCall: { id: call.id, name, args: parseArguments(args) } };
  const found = callOf(tag.part);
  const inner = found?.call ?? {};
  if (call.id === tag.id && name === inner['name'] && args === argumentsText(inner['args'])) return tag.part;
  const { id: _id, ...rest } = inner;
  const keepsId = tag.nativeId || call.id !== tag.id;
  return {
    ...tag.part,
    [tag.key]: {
      ...(keepsId ? { id: call.id } : {}),
      ...rest,
      name,
      args: args === argumentsText(inner['args']) ? inner['args'] : parseArguments(args),
    },
  };
}

function responsePart(message: Message, calls: Map<string, { name: string; key: string; nativeId: boolean }>): unknown {
  const tag = tagOf<ContentTag>(message)?.response;
  const id = message.tool_call_id ?? '';
  if (tag === undefined) {
    const call = calls.get(id);
    const response = message.content === SYNTHETIC_RESULT ? { error: SYNTHETIC_RESULT } : { output: message.content };
    return {
      [call?.key ?? 'functionResponse']: {
        ...(call === undefined || call.nativeId ? { id } : {}),
        name: call?.name ?? message.name ?? '',
        response,
      },
    };
  }
  const found = responseOf(tag.part);
  const inner = found?.response ?? {};
  if (id === tag.id && message.content === argumentsText(inner['response'])) return tag.part;
  const { id: _id, ...rest } = inner;
  const keepsId = tag.nativeId || id !== tag.id;
  return {
    ...tag.part,
    [tag.key]: {
      ...(keepsId ? { id } : {}),
      ...rest,
      response:
        message.content === argumentsText(inner['response']) ? inner['response'] : parseArguments(message.content),
    },
  };
}
