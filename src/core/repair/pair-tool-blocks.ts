import { hasToolCalls, type Message, type ToolCall } from '../messages.js';
import { isSameUserMessage } from '../rules/user-message-repeated.js';
import { SYNTHETIC_RESULT } from '../synthetic-result.js';
import { copyOf, type Entry, type RepairContext } from './context.js';
import { preview } from './normalize.js';

interface Slot {
  /** The id the call had in the input ('' when it had none). */
  original: string;
  /** The id it goes out with. */
  id: string;
  name: string;
  /** Its position among the message's calls. */
  position: number;
  answered: boolean;
}

/**
 * Calls sharing an id (or lacking one), in call order, and the first of them still owed. Calls are
 * answered first owed first, so `next` only moves forward: each lookup costs amortised O(1), and a
 * block of 10^5 calls with one constant id pairs in linear time.
 */
interface SlotQueue {
  slots: Slot[];
  next: number;
}

function firstOwed(queue: SlotQueue | undefined): Slot | undefined {
  if (queue === undefined) return undefined;
  while (queue.next < queue.slots.length && (queue.slots[queue.next] as Slot).answered) queue.next += 1;
  return queue.slots[queue.next];
}

/**
 * Puts every tool block right: an assistant message with calls, then exactly one result per call.
 * Results are paired with their calls by position (the block after the assistant message), never
 * by a global set of ids. Looks ahead no further than the next assistant message with calls, so
 * the whole pass is linear.
 */
export function pairToolBlocks(entries: Entry[], context: RepairContext, copied: Set<Message>): Entry[] {
  const out: Entry[] = [];
  const usedIds = new Set<string>();
  const uniqueAcross = context.profile.uniqueIdsAcrossRequest || context.strongest;
  let index = 0;
  while (index < entries.length) {
    const entry = entries[index] as Entry;
    if (entry.message.role === 'tool') {
      emitOrphan(entry, out, context, copied, 'it follows no assistant message with tool_calls');
      index += 1;
      continue;
    }
    if (!hasToolCalls(entry.message)) {
      out.push(entry);
      index += 1;
      continue;
    }
    index =
      emitWholeBlock(entries, index, out, context, usedIds, uniqueAcross) ??
      emitBlock(entries, index, out, context, copied, usedIds, uniqueAcross);
  }
  return out;
}

/**
 * The common case, a block already whole: distinct well-formed ids, answered one each by the run
 * of tool messages right after it. Passed through as it is, with no bookkeeping; anything else
 * returns undefined and takes the full path.
 */
function emitWholeBlock(
  entries: Entry[],
  start: number,
  out: Entry[],
  context: RepairContext,
  usedIds: Set<string>,
  uniqueAcross: boolean,
): number | undefined {
  const owner = entries[start] as Entry;
  const calls = owner.message.tool_calls as ToolCall[];
  const count = calls.length;
  if (count > 30) return undefined; // a bit per call below, and the duplicate test is quadratic: wide blocks take the full path
  const pattern = context.profile.idPattern;
  for (let position = 0; position < count; position += 1) {
    const id = calls[position]?.id;
    if (
      typeof id !== 'string' ||
      id === '' ||
      (pattern !== undefined && !pattern.test(id)) ||
      (uniqueAcross && usedIds.has(id))
    )
      return undefined;
    for (let before = 0; before < position; before += 1) if (calls[before]?.id === id) return undefined;
  }
  const end = start + count; // index of the last result
  if (end >= entries.length || (entries[end + 1] !== undefined && (entries[end + 1] as Entry).message.role === 'tool'))
    return undefined;
  let answered = 0; // bit per call, for the usual handful
  for (let cursor = start + 1; cursor <= end; cursor += 1) {
    const message = (entries[cursor] as Entry).message;
    if (message.role !== 'tool') return undefined;
    let position = 0;
    while (position < count && (calls[position]?.id !== message.tool_call_id || (answered & (1 << position)) !== 0))
      position += 1;
    if (position === count) return undefined;
    answered |= 1 << position;
  }
  for (let cursor = start; cursor <= end; cursor += 1) out.push(entries[cursor] as Entry);
  if (uniqueAcross) for (const call of calls) usedIds.add(call.id as string);
  return end + 1;
}

function emitBlock(
  entries: Entry[],
  start: number,
  out: Entry[],
  context: RepairContext,
  copied: Set<Message>,
  usedIds: Set<string>,
  uniqueAcross: boolean,
): number {
  const owner = entries[start] as Entry;
  const calls = owner.message.tool_calls as ToolCall[];
  const pattern = context.profile.idPattern;
  const slots: Slot[] = [];
  const byId = new Map<string, SlotQueue>();
  const withoutId: SlotQueue = { slots: [], next: 0 };
  const every: SlotQueue = { slots, next: 0 };
  let newCalls: ToolCall[] | undefined;

  for (let position = 0; position < calls.length; position += 1) {
    const call = calls[position] as ToolCall;
    const original = typeof call?.id === 'string' ? call.id : '';
    let id = original;
    if (id === '') {
      id = context.newId(`${owner.origin}:${position}`);
      context.note({
        kind: 'id-generated',
        index: owner.origin,
        toolCallId: id,
        detail: `call ${position} had no id; its result (if any) gets the same one`,
      });
    } else if (byId.has(id) || (uniqueAcross && usedIds.has(id)) || (pattern !== undefined && !pattern.test(id))) {
      const why =
        pattern !== undefined && !pattern.test(id)
          ? `does not match ${context.profile.name}'s id format`
          : 'is used by another call';
      id = context.newId(`${owner.origin}:${position}:${original}`);
      context.note({
        kind: 'id-remapped',
        index: owner.origin,
        toolCallId: id,
        detail: `call id '${original}' ${why}; renamed to '${id}' in the call and its result`,
      });
    }
    usedIds.add(id);
    const slot: Slot = {
      original,
      id,
      name: typeof call?.function?.name === 'string' ? call.function.name : '',
      position,
      answered: false,
    };
    slots.push(slot);
    if (original === '') withoutId.slots.push(slot);
    else {
      const queue = byId.get(original);
      if (queue === undefined) byId.set(original, { slots: [slot], next: 0 });
      else queue.slots.push(slot);
    }
    if (id !== original) {
      newCalls ??= calls.slice();
      newCalls[position] = { ...call, id };
    }
  }

  // Look ahead for this block's results.
  const matched = new Map<number, Slot>(); // entry index -> slot it answers
  const duplicates = new Set<number>();
  const answeredIds = new Set<string>();
  let answeredCount = 0;
  let last = start;
  let inRun = true;
  for (let cursor = start + 1; cursor < entries.length; cursor += 1) {
    const message = (entries[cursor] as Entry).message;
    if (message.role !== 'tool') {
      if (answeredCount === slots.length || hasToolCalls(message)) break;
      inRun = false;
      continue;
    }
    const resultId = typeof message.tool_call_id === 'string' ? message.tool_call_id : '';
    let slot: Slot | undefined;
    if (resultId !== '') slot = firstOwed(byId.get(resultId));
    else if (inRun) slot = firstOwed(withoutId) ?? firstOwed(every);
    if (slot !== undefined) {
      slot.answered = true;
      answeredCount += 1;
      answeredIds.add(resultId);
      matched.set(cursor, slot);
      last = cursor;
    } else if (resultId !== '' && answeredIds.has(resultId)) {
      duplicates.add(cursor);
      last = Math.max(last, cursor);
    } else if (!inRun) {
      // A stray result beyond the run: not this block's; the main loop meets it as an orphan.
      continue;
    } else {
      last = cursor; // in the run but answering nothing here: handled right after the block
    }
    if (
      answeredCount === slots.length &&
      cursor + 1 < entries.length &&
      (entries[cursor + 1] as Entry).message.role !== 'tool'
    )
      break;
  }

  // The assistant message, with the calls it keeps.
  const unanswered = slots.filter((slot) => !slot.answered);
  if (context.unanswered === 'strip' && unanswered.length > 0) {
    const base = newCalls ?? calls;
    const keep = base.filter((_, position) => (slots[position] as Slot).answered);
    newCalls = keep;
    for (const slot of unanswered) {
      context.note({
        kind: 'call-stripped',
        index: owner.origin,
        toolCallId: slot.id,
        detail: `call ${slot.name || '(no name)'} ${preview(calls[slot.position]?.function?.arguments)} never got a result; removed`,
      });
    }
  }
  if (newCalls !== undefined) {
    const copy = copyOf(owner, copied);
    if (newCalls.length > 0) copy.tool_calls = newCalls;
    else delete copy.tool_calls;
  }
  out.push(owner);

  // Its results, in the order they came; then synthetic ones for calls never answered.
  for (let cursor = start + 1; cursor <= last; cursor += 1) {
    const slot = matched.get(cursor);
    if (slot === undefined) continue;
    const result = entries[cursor] as Entry;
    if (result.message.tool_call_id !== slot.id) {
      copyOf(result, copied).tool_call_id = slot.id;
      if (slot.original === '' || result.message.tool_call_id === undefined || result.message.tool_call_id === '') {
        context.note({
          kind: 'id-generated',
          index: result.origin,
          toolCallId: slot.id,
          detail: "result had no tool_call_id (or its call had no id); given its call's id",
        });
      } else {
        context.note({
          kind: 'id-remapped',
          index: result.origin,
          toolCallId: slot.id,
          detail: `result's tool_call_id '${slot.original}' renamed with its call's`,
        });
      }
    }
    out.push(result);
  }
  if (context.unanswered === 'synthesize') {
    for (const slot of unanswered) {
      out.push({ message: { role: 'tool', tool_call_id: slot.id, content: SYNTHETIC_RESULT }, origin: owner.origin });
      context.note({
        kind: 'result-synthesized',
        index: owner.origin,
        toolCallId: slot.id,
        detail: `call ${slot.name || '(no name)'} had no result; answered with an error result saying it did not complete`,
      });
    }
  }

  // What sat inside the block: duplicates go, stray results become orphans, other messages move after the block.
  for (let cursor = start + 1; cursor <= last; cursor += 1) {
    if (matched.has(cursor)) continue;
    const entry = entries[cursor] as Entry;
    if (duplicates.has(cursor)) {
      context.note({
        kind: 'result-duplicate-dropped',
        index: entry.origin,
        toolCallId: entry.message.tool_call_id ?? '',
        detail: `a second result for the same call (${preview(entry.message.content)}); the first is kept`,
      });
      continue;
    }
    if (entry.message.role === 'tool') {
      emitOrphan(entry, out, context, copied, 'its tool_call_id matches no call of the assistant message before it');
      continue;
    }
    const previous = out[out.length - 1];
    if (
      context.foldRepeats &&
      entry.message.role === 'user' &&
      previous !== undefined &&
      previous.message.role === 'user' &&
      isSameUserMessage(previous.message.content, entry.message.content)
    ) {
      // The same user message again, from inside the block: a crash-retry loop's leftover (as the
      // DeepSeek Harness plugin dsh-messages-sanitizer describes it).
      context.note({
        kind: 'user-repeat-collapsed',
        index: entry.origin,
        detail: `repeats the user message at input index ${previous.origin} (a retry), and sat inside a tool block; kept once`,
      });
      continue;
    }
    context.note({
      kind: 'message-moved',
      index: entry.origin,
      detail: `${entry.message.role} message sat between tool calls and their results; moved after them`,
    });
    out.push(entry);
  }
  return last + 1;
}

function emitOrphan(entry: Entry, out: Entry[], context: RepairContext, copied: Set<Message>, why: string): void {
  const message = entry.message;
  const id = typeof message.tool_call_id === 'string' && message.tool_call_id !== '' ? message.tool_call_id : undefined;
  if (context.orphans === 'drop') {
    context.note({
      kind: 'orphan-dropped',
      index: entry.origin,
      ...(id === undefined ? {} : { toolCallId: id }),
      detail: `tool result ${preview(message.content)} dropped: ${why}`,
    });
    return;
  }
  const header = `[unstuck: the tool result below${id === undefined ? '' : ` (tool_call_id ${id}${typeof message.name === 'string' ? `, tool ${message.name}` : ''})`} lost its tool call, so it is kept as text]`;
  const copy = copyOf(entry, copied);
  copy.role = 'user';
  delete copy.tool_call_id;
  const content = message.content;
  if (Array.isArray(content)) copy.content = [{ type: 'text', text: header }, ...content];
  else copy.content = typeof content === 'string' && content !== '' ? `${header}\n${content}` : header;
  context.note({
    kind: 'orphan-to-user',
    index: entry.origin,
    ...(id === undefined ? {} : { toolCallId: id }),
    detail: `tool result turned into a user text message: ${why}`,
  });
  out.push(entry);
}
