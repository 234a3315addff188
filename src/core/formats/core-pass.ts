import type { Change } from '../changes.js';
import type { Message } from '../messages.js';
import type { RepairOptions } from '../options.js';
import { repairChat } from '../repair-chat.js';
import type { Converted } from './format-types.js';

/** A native element on its way through a repair, with the index it had in the input. */
export interface NativeEntry {
  value: unknown;
  origin: number;
  /** Made by the repair (results added for unanswered calls); `origin` is then the call's message. */
  added?: boolean;
}

export interface Converter {
  from(values: readonly unknown[]): Converted<Message>;
  /** `joined`: the native element out also holds results the repair added (so it changed). */
  build(messages: readonly Message[]): { messages: unknown[]; sources: (number | undefined)[]; joined: boolean[] };
}

/** Where the core's repair is needed, for a history in the native form. */
export interface CorePlan {
  /** Indices of the elements that break a pairing rule; none: the core has nothing to do. */
  damaged: number[];
  /** A fix may make or rename ids, which must stay unique across the whole history: repair it whole. */
  whole: boolean;
  /** An element that opens a tool block (an assistant or model turn with calls): the core's pairing never looks across one. */
  opensBlock(value: unknown): boolean;
}

/**
 * Runs the core's repair (pairing by position, wedged messages moved after the block, error
 * results for unanswered calls, orphans kept as text) on the converted form, and converts back.
 * Each change is re-addressed to the native input index it concerns. Only the stretches between
 * block openings that hold a violation are converted: a long history with one broken turn costs
 * that turn, not the history.
 */
export function repairThroughCore(
  entries: NativeEntry[],
  converter: Converter,
  options: RepairOptions,
  changes: Change[],
  plan: (values: unknown[]) => CorePlan,
): NativeEntry[] {
  const values = entries.map((entry) => entry.value);
  const found = plan(values);
  if (found.damaged.length === 0) return entries;
  if (found.whole) return repairSlice(entries, converter, options, changes);
  const starts = [0];
  for (let index = 1; index < values.length; index += 1) if (found.opensBlock(values[index])) starts.push(index);
  const stretchOf = (index: number) => {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((starts[middle] as number) <= index) low = middle;
      else high = middle - 1;
    }
    return low;
  };
  const stretches = [...new Set(found.damaged.map(stretchOf))].sort((a, b) => a - b);
  const out: NativeEntry[] = [];
  let cursor = 0;
  for (let position = 0; position < stretches.length; position += 1) {
    const first = stretches[position] as number;
    let last = first;
    while (stretches[position + 1] === last + 1) {
      last += 1;
      position += 1;
    }
    const from = starts[first] as number;
    const to = starts[last + 1] ?? entries.length;
    // Element by element: spreading a long slice into push() overflows the stack (about 10^5 arguments).
    for (let index = cursor; index < from; index += 1) out.push(entries[index] as NativeEntry);
    for (const entry of repairSlice(entries.slice(from, to), converter, options, changes)) out.push(entry);
    cursor = to;
  }
  for (let index = cursor; index < entries.length; index += 1) out.push(entries[index] as NativeEntry);
  return out;
}

function repairSlice(
  entries: NativeEntry[],
  converter: Converter,
  options: RepairOptions,
  changes: Change[],
): NativeEntry[] {
  const converted = converter.from(entries.map((entry) => entry.value));
  const result = repairChat(converted.messages, options);
  if (!result.changed) return entries;
  const originOf = (convertedIndex: number) => (entries[converted.origins[convertedIndex] ?? 0] as NativeEntry).origin;
  for (const change of result.changes) changes.push({ ...change, index: originOf(change.index) });
  const built = converter.build(result.messages);
  let previous = entries[0]?.origin ?? 0;
  return built.messages.map((value, position) => {
    const source = built.sources[position];
    const origin = source === undefined ? previous : (entries[source] as NativeEntry).origin;
    previous = origin;
    if (source === undefined) return { value, origin, added: true };
    if (built.joined[position] === true)
      changes.push({
        kind: 'result-synthesized',
        index: origin,
        detail: 'received the error result(s) added for calls that had none',
      });
    return { value, origin };
  });
}

export { preview } from '../repair/normalize.js';
