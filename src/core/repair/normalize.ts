import { isMessage, type Message, messageShapeProblem, type ToolCall, textOf } from '../messages.js';
import { isJsonObjectText, isToolCallMalformed } from '../tool-call-shape.js';
import { copyOf, type Entry, type RepairContext } from './context.js';

/**
 * Per-message fixes that need no neighbours: shapes a provider cannot deserialise, and fields it
 * rejects. Messages needing nothing stay the same objects.
 */
export function normalizeMessages(input: readonly Message[], context: RepairContext, copied: Set<Message>): Entry[] {
  const entries: Entry[] = [];
  for (let origin = 0; origin < input.length; origin += 1) {
    const value: unknown = input[origin];
    // A string (or no content) is the shape of nearly every message: only other values are looked into.
    const content = isMessage(value) ? value.content : 0;
    const problem =
      typeof content === 'string' ||
      content === null ||
      content === undefined ||
      (context.profile.nativeContent === true && isMessage(value))
        ? undefined
        : messageShapeProblem(value);
    if (problem !== undefined) {
      const what =
        problem.path === ''
          ? 'not a message object'
          : `no provider takes its ${problem.path.slice(1)} (${problem.got})`;
      context.note({ kind: 'malformed-dropped', index: origin, detail: `${what}: ${preview(value)}` });
      continue;
    }
    if (!isMessage(value)) continue; // never: no problem means a message (narrows the type)
    const entry: Entry = { message: value, origin };
    if (!context.profile.roles.has(value.role) && value.role === 'developer' && context.profile.roles.has('system')) {
      copyOf(entry, copied).role = 'system';
      context.note({
        kind: 'role-renamed',
        index: origin,
        detail: `role 'developer' is not accepted by ${context.profile.name}; sent as 'system'`,
      });
    }
    if (
      context.profile.contentAlwaysRequired === true &&
      entry.message.role !== 'assistant' &&
      Array.isArray(entry.message.content) &&
      entry.message.content.length === 0
    ) {
      copyOf(entry, copied).content = '';
      context.note({
        kind: 'content-filled',
        index: origin,
        detail: `${context.profile.name} rejects an empty content array; sent as ''`,
      });
    }
    if (entry.message.role === 'assistant') normalizeAssistant(entry, context, copied);
    else if (
      (entry.message.content === null || entry.message.content === undefined) &&
      context.enforces('content-null')
    ) {
      if (entry.message.role === 'tool') {
        copyOf(entry, copied).content = '';
        context.note({
          kind: 'content-filled',
          index: origin,
          detail: 'tool result had null content; sent as an empty string',
        });
      } else if (entry.message.role === 'user' || entry.message.role === 'system') {
        context.note({
          kind: 'empty-message-dropped',
          index: origin,
          detail: `${entry.message.role} message with no content`,
        });
        continue;
      }
    }
    entries.push(entry);
  }
  return entries;
}

function normalizeAssistant(entry: Entry, context: RepairContext, copied: Set<Message>): void {
  const message = entry.message;
  const origin = entry.origin;
  if (
    context.profile.contentAlwaysRequired === true &&
    Array.isArray(message.tool_calls) &&
    message.tool_calls.length > 0 &&
    (message.content === null ||
      message.content === undefined ||
      (Array.isArray(message.content) && message.content.length === 0))
  ) {
    copyOf(entry, copied).content = '';
    context.note({
      kind: 'content-filled',
      index: origin,
      detail: `${context.profile.name} needs string content beside tool_calls; ${preview(message.content)} sent as ''`,
    });
  }
  if (
    context.profile.assistantContentString === true &&
    Array.isArray(message.content) &&
    message.content.every((part) => part?.type === 'text')
  ) {
    copyOf(entry, copied).content = textOf(message.content);
    context.note({
      kind: 'content-filled',
      index: origin,
      detail: `${context.profile.name} needs assistant content as a string; the text parts were joined`,
    });
  }
  if ('tool_calls' in message && (!Array.isArray(message.tool_calls) || message.tool_calls.length === 0)) {
    const copy = copyOf(entry, copied);
    delete copy.tool_calls;
    context.note({
      kind: 'tool-calls-empty-removed',
      index: origin,
      detail: `tool_calls was ${preview(message.tool_calls)}; removed`,
    });
    return;
  }
  const calls = message.tool_calls;
  if (calls === undefined) return;
  let newCalls: ToolCall[] | undefined;
  for (let position = 0; position < calls.length; position += 1) {
    const call = calls[position];
    let fixed: ToolCall | undefined;
    if (
      isToolCallMalformed(call) &&
      call !== null &&
      typeof call === 'object' &&
      !Array.isArray(call) &&
      typeof (call as Record<string, unknown>)['name'] === 'string'
    ) {
      const { name, arguments: args, ...rest } = call as Record<string, unknown>;
      fixed = {
        ...rest,
        type: typeof rest['type'] === 'string' ? (rest['type'] as string) : 'function',
        function: { name: name as string, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) },
      };
      context.note({
        kind: 'tool-call-rebuilt',
        index: origin,
        ...(typeof call.id === 'string' ? { toolCallId: call.id } : {}),
        detail: `call ${position} had name/arguments outside its function object; rebuilt`,
      });
    }
    if (fixed === undefined && isToolCallMalformed(call)) {
      // No name anywhere: no provider can take it and nothing can rebuild it. Its result, if any, is kept as text.
      newCalls ??= calls.slice();
      newCalls[position] = UNUSABLE;
      context.note({
        kind: 'call-stripped',
        index: origin,
        ...(typeof call?.id === 'string' ? { toolCallId: call.id } : {}),
        detail: `call ${position} has no function name (${preview(call)}); removed`,
      });
      continue;
    }
    const current = fixed ?? call;
    const args = current?.function?.arguments;
    if (
      context.enforces('tool-call-arguments-invalid-json') &&
      current?.function !== undefined &&
      args !== undefined &&
      (typeof args !== 'string' || !isJsonObjectText(args))
    ) {
      const repaired = repairArguments(args);
      fixed = { ...current, function: { ...current.function, arguments: repaired } };
      context.note({
        kind: 'arguments-repaired',
        index: origin,
        ...(typeof current.id === 'string' ? { toolCallId: current.id } : {}),
        detail: `arguments were not a JSON object (${preview(args)}); sent as ${preview(repaired)}`,
      });
    }
    if (fixed !== undefined) {
      newCalls ??= calls.slice();
      newCalls[position] = fixed;
    }
  }
  if (newCalls !== undefined) {
    const kept = newCalls.filter((call) => call !== UNUSABLE);
    const copy = copyOf(entry, copied);
    if (kept.length > 0) copy.tool_calls = kept;
    else delete copy.tool_calls;
  }
  removeDuplicatedToolUseParts(entry, context, copied);
}

const UNUSABLE: ToolCall = Object.freeze({});

/** '' becomes {}; anything else is kept whole inside an object, so nothing of it is lost. */
function repairArguments(args: unknown): string {
  if (args === '' || args === null || args === undefined) return '{}';
  if (typeof args === 'object' && !Array.isArray(args)) return JSON.stringify(args);
  return JSON.stringify({ unstuck_unparsed_arguments: typeof args === 'string' ? args : JSON.stringify(args) });
}

/** An Anthropic `tool_use` part carrying the same id as a tool_calls entry is the same call twice (corpus 043). */
function removeDuplicatedToolUseParts(entry: Entry, context: RepairContext, copied: Set<Message>): void {
  const content = entry.message.content;
  if (!Array.isArray(content)) return;
  const ids = new Set((entry.message.tool_calls ?? []).map((call) => call?.id));
  const kept = content.filter((part) => !(part?.type === 'tool_use' && ids.has(part['id'] as string)));
  if (kept.length === content.length) return;
  copyOf(entry, copied).content = kept;
  context.note({
    kind: 'tool-use-part-removed',
    index: entry.origin,
    detail: `${content.length - kept.length} tool_use content part(s) duplicated calls already in tool_calls`,
  });
}

export function preview(value: unknown): string {
  let text: string;
  try {
    text = value === undefined ? 'undefined' : JSON.stringify(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
