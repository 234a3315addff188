import { hasToolCalls, isEmptyContent, type Message, textOf } from '../messages.js';
import { isSameUserMessage } from '../rules/user-message-repeated.js';
import { copyOf, type Entry, type RepairContext } from './context.js';
import { preview } from './normalize.js';

export const BRIDGE_TEXT = 'Tool results received.';

/** Fixes that depend on the provider and on neighbours, once every tool block is whole. */
export function applyProviderFixes(entries: Entry[], context: RepairContext, copied: Set<Message>): Entry[] {
  let out = dropEmptyAssistants(entries, context);
  if (context.enforces('system-message-position')) out = hoistSystemMessages(out, context, copied);
  if (context.enforces('roles-not-alternating') || (context.strongest && context.foldRepeats))
    out = foldConsecutive(out, context, copied);
  if (context.enforces('tool-followed-by-user')) out = bridgeToolToUser(out, context);
  if (context.enforces('reasoning-content-missing') && context.thinking) fillReasoning(out, context, copied);
  if (context.profile.fields !== undefined) removeUnknownFields(out, context, copied);
  return out;
}

function dropEmptyAssistants(entries: Entry[], context: RepairContext): Entry[] {
  const nullRule = context.enforces('content-null');
  const emptyRule = context.enforces('content-empty');
  let out: Entry[] | undefined; // a new array only once something is dropped
  for (let index = 0; index < entries.length; index += 1) {
    const entry = entries[index] as Entry;
    const message = entry.message;
    const keep =
      message.role !== 'assistant' ||
      hasToolCalls(message) ||
      message.prefix === true ||
      'function_call' in message ||
      !(message.content === null || message.content === undefined
        ? nullRule
        : emptyRule && isEmptyContent(message.content));
    if (keep) {
      out?.push(entry);
      continue;
    }
    out ??= entries.slice(0, index);
    const reasoning =
      typeof message.reasoning_content === 'string' && message.reasoning_content !== ''
        ? ` (its reasoning_content, ${message.reasoning_content.length} characters, went with it)`
        : '';
    context.note({
      kind: 'empty-message-dropped',
      index: entry.origin,
      detail: `assistant message with no content and no tool calls${reasoning}`,
    });
  }
  return out ?? entries;
}

/** Repeated user messages (crash retries) kept once; where the provider needs alternation, same-role neighbours merged. */
function foldConsecutive(entries: Entry[], context: RepairContext, copied: Set<Message>): Entry[] {
  const alternate = context.enforces('roles-not-alternating');
  const out: Entry[] = [];
  for (const entry of entries) {
    const previous = out[out.length - 1];
    const role = entry.message.role;
    if (
      previous === undefined ||
      previous.message.role !== role ||
      (role !== 'user' && role !== 'assistant') ||
      hasToolCalls(previous.message)
    ) {
      out.push(entry);
      continue;
    }
    if (hasToolCalls(entry.message)) {
      // assistant text, then an assistant with calls: where roles must alternate, the text joins the calls' message.
      if (!alternate || role !== 'assistant') {
        out.push(entry);
        continue;
      }
      const merged = copyOf(entry, copied);
      const before = textOf(previous.message.content);
      merged.content = isEmptyContent(entry.message.content) ? before : `${before}\n\n${textOf(entry.message.content)}`;
      if (typeof previous.message.reasoning_content === 'string' && previous.message.reasoning_content !== '') {
        merged.reasoning_content =
          typeof entry.message.reasoning_content === 'string' && entry.message.reasoning_content !== ''
            ? `${previous.message.reasoning_content}\n${entry.message.reasoning_content}`
            : previous.message.reasoning_content;
      }
      out[out.length - 1] = entry;
      context.note({
        kind: 'messages-merged',
        index: previous.origin,
        detail: `assistant text merged into the assistant message with calls after it (input index ${entry.origin}): the provider needs alternating roles`,
      });
      context.note({
        kind: 'messages-merged',
        index: entry.origin,
        detail: `received the text of the assistant message at input index ${previous.origin}, which preceded it`,
      });
      continue;
    }
    if (role === 'user' && context.foldRepeats && isSameUserMessage(previous.message.content, entry.message.content)) {
      context.note({
        kind: 'user-repeat-collapsed',
        index: entry.origin,
        detail: `repeats the user message at input index ${previous.origin} (a retry); kept once`,
      });
      continue;
    }
    if (!alternate) {
      out.push(entry);
      continue;
    }
    const merged = copyOf(previous, copied);
    merged.content = `${textOf(previous.message.content)}\n\n${textOf(entry.message.content)}`;
    context.note({
      kind: 'messages-merged',
      index: entry.origin,
      detail: `${role} message merged into the ${role} message before it (input index ${previous.origin}): the provider needs alternating roles`,
    });
    context.note({
      kind: 'messages-merged',
      index: previous.origin,
      detail: `received the text of the ${role} message at input index ${entry.origin}, which followed it`,
    });
  }
  return out;
}

function bridgeToolToUser(entries: Entry[], context: RepairContext): Entry[] {
  const out: Entry[] = [];
  for (const entry of entries) {
    const previous = out[out.length - 1];
    if (previous?.message.role === 'tool' && (entry.message.role === 'user' || entry.message.role === 'system')) {
      out.push({ message: { role: 'assistant', content: BRIDGE_TEXT }, origin: entry.origin });
      context.note({
        kind: 'assistant-bridge-inserted',
        index: entry.origin,
        detail: `${context.profile.name} rejects a ${entry.message.role} message right after a tool result; an assistant message saying the results were received now stands between`,
      });
    }
    out.push(entry);
  }
  return out;
}

/**
 * Thinking mode needs the key on the turn's assistant messages; the reasoning itself is gone, so ''
 * (accepted). One pass: the assistants lacking the key are remembered per turn and filled when the
 * turn ends, if it called tools (or, in a request, if it is the turn after the last user message).
 */
function fillReasoning(entries: Entry[], context: RepairContext, copied: Set<Message>): void {
  const moonshot = context.profile.dialect === 'moonshot';
  const lacking: Entry[] = [];
  let calledTools = false;
  const endTurn = (last: boolean) => {
    if (calledTools || (last && context.scope === 'request')) {
      for (const target of lacking) {
        copyOf(target, copied).reasoning_content = '';
        context.note({
          kind: 'reasoning-content-filled',
          index: target.origin,
          detail:
            "thinking mode needs reasoning_content on this turn's assistant messages; the original reasoning was not saved, so it is sent as an empty string",
        });
      }
    }
    lacking.length = 0;
    calledTools = false;
  };
  for (const entry of entries) {
    const message = entry.message;
    if (message.role === 'user') {
      endTurn(false);
      continue;
    }
    if (message.role !== 'assistant') continue;
    const calls = hasToolCalls(message);
    calledTools ||= calls;
    if (typeof message.reasoning_content !== 'string' && (calls || !moonshot)) lacking.push(entry);
  }
  endTurn(true);
}

function removeUnknownFields(entries: Entry[], context: RepairContext, copied: Set<Message>): void {
  const fields = context.profile.fields ?? {};
  for (const entry of entries) {
    const allowed = fields[entry.message.role];
    if (allowed === undefined) continue;
    for (const field of Object.keys(entry.message)) {
      if (allowed.has(field)) continue;
      const value = entry.message[field];
      delete copyOf(entry, copied)[field];
      context.note({
        kind: 'field-removed',
        index: entry.origin,
        detail: `${context.profile.name} rejects the field '${field}' on ${entry.message.role} messages; removed (${preview(value)})`,
      });
    }
  }
}

/** Later system messages merged into one leading system message (order of their texts kept). */
function hoistSystemMessages(entries: Entry[], context: RepairContext, copied: Set<Message>): Entry[] {
  const first = entries[0];
  const later = entries.filter((entry, index) => index > 0 && entry.message.role === 'system');
  if (later.length === 0) return entries;
  const rest = entries.filter((entry, index) => index === 0 || entry.message.role !== 'system');
  let head: Entry;
  if (first?.message.role === 'system') {
    head = first;
  } else {
    head = later.shift() as Entry;
    rest.unshift(head);
    context.note({
      kind: 'system-moved-to-start',
      index: head.origin,
      detail: 'system message moved to the start: the provider takes system text only there',
    });
  }
  if (later.length > 0) {
    copyOf(head, copied).content = [
      textOf(head.message.content),
      ...later.map((entry) => textOf(entry.message.content)),
    ].join('\n\n');
    for (const entry of later)
      context.note({
        kind: 'system-moved-to-start',
        index: entry.origin,
        detail: `system message merged into the leading system message (input index ${head.origin}): the provider takes system text only there`,
      });
    context.note({
      kind: 'system-moved-to-start',
      index: head.origin,
      detail: `received the text of the later system message(s) at input index ${later.map((entry) => entry.origin).join(', ')}`,
    });
  }
  return rest;
}
