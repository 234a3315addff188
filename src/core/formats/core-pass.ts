import type { Message } from '../messages.js';
import { repair, type RepairOptions } from '../repair.js';
import type { Converted, FormatChange } from './format-types.js';

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

/**
 * Runs the core's repair (pairing by position, wedged messages moved after the block, error
 * results for unanswered calls, orphans kept as text) on the converted form, and converts back.
 * Each change is re-addressed to the native input index it concerns.
 */
export function repairThroughCore(entries: NativeEntry[], converter: Converter, options: RepairOptions, changes: FormatChange[], needed: (values: unknown[]) => boolean = () => true): NativeEntry[] {
  // Converting a long history costs more than checking it natively: skip it when no pairing rule is broken.
  if (!needed(entries.map((entry) => entry.value))) return entries;
  const converted = converter.from(entries.map((entry) => entry.value));
  const result = repair(converted.messages, options);
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
    if (built.joined[position] === true) changes.push({ kind: 'result-synthesized', index: origin, detail: 'received the error result(s) added for calls that had none' });
    return { value, origin };
  });
}

export { preview } from '../repair/normalize.js';
