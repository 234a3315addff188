import type { Change } from '../changes.js';
import type { Message } from '../messages.js';
import type { RepairPolicy } from '../options.js';
import type { Profile } from '../profile.js';

/** A message on its way through the repair, with the index it had in the input. */
export interface Entry {
  message: Message;
  origin: number;
}

export interface RepairContext {
  profile: Profile;
  unanswered: NonNullable<RepairPolicy['unanswered']>;
  orphans: NonNullable<RepairPolicy['orphans']>;
  strongest: boolean;
  /** Fold a user message that repeats the one before it (policy foldRepeatedUserMessages, default true). */
  foldRepeats: boolean;
  thinking: boolean;
  scope: 'history' | 'request';
  /** Rules the profile enforces (by id), so each step fixes only what the provider rejects. */
  enforces(rule: string): boolean;
  changes: Change[];
  note(change: Change): void;
  /** A fresh, unique id (in the provider's format) derived from a seed text. */
  newId(seed: string): string;
}

/**
 * Shallow copy once, then mutate the copy: untouched messages stay the same objects. `copied` is a
 * plain Set that lives for one repair: a WeakSet's ephemeron bookkeeping cost more per copy (profiled
 * at 10^5 copies, docs/decisions/core-one-pass-cost.md).
 */
export function copyOf(entry: Entry, copied: Set<Message>): Message {
  if (copied.has(entry.message)) return entry.message;
  const copy: Message = { ...entry.message };
  copied.add(copy);
  entry.message = copy;
  return copy;
}
