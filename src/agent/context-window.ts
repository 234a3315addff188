import type { Message } from '../core/index.js';

const charCounts = new WeakMap<Message, number>();

/** Serialized size of a message, cached per message object (histories are append-mostly). */
export function charsOf(message: Message): number {
  let count = charCounts.get(message);
  if (count === undefined) {
    count = JSON.stringify(message).length;
    charCounts.set(message, count);
  }
  return count;
}

export interface RequestWindow {
  messages: Message[];
  /** Messages of the history left out of this request. */
  omitted: number;
  estimatedTokens: number;
}

/**
 * The part of the history that fits `budgetTokens`: the leading system messages, then whole turns
 * from the newest back (a turn starts at a user message). When the current turn alone is too big,
 * its user message is kept and its oldest steps are left out, cutting only before an assistant
 * message. Every cut falls between tool blocks, never inside one, so the window has no orphan.
 * The saved history is never trimmed: only what is sent.
 */
export function selectWindow(history: readonly Message[], budgetTokens: number, charsPerToken: number): RequestWindow {
  const tokens = (chars: number): number => Math.ceil(chars / charsPerToken);
  let lead = 0;
  let leadChars = 0;
  while (lead < history.length && history[lead]?.role === 'system') {
    leadChars += charsOf(history[lead]!);
    lead += 1;
  }
  // suffix[i] = chars of history[i..]
  const suffix = new Array<number>(history.length + 1).fill(0);
  for (let index = history.length - 1; index >= lead; index -= 1)
    suffix[index] = suffix[index + 1]! + charsOf(history[index]!);
  const fits = (chars: number): boolean => tokens(chars) <= budgetTokens;
  if (fits(leadChars + suffix[lead]!))
    return { messages: history as Message[], omitted: 0, estimatedTokens: tokens(leadChars + suffix[lead]!) };

  let lastUser = -1;
  for (let index = history.length - 1; index >= lead; index -= 1) {
    if (history[index]?.role === 'user') {
      lastUser = index;
      break;
    }
  }
  for (let index = lead + 1; index <= lastUser; index += 1) {
    if (history[index]?.role !== 'user') continue;
    if (fits(leadChars + suffix[index]!))
      return window(history, lead, [[index, history.length]], tokens(leadChars + suffix[index]!));
  }
  if (lastUser < 0)
    return { messages: history as Message[], omitted: 0, estimatedTokens: tokens(leadChars + suffix[lead]!) };
  // The current turn alone is too big: keep its user message, drop its oldest steps.
  const userChars = charsOf(history[lastUser]!);
  let lastStart = -1;
  for (let index = lastUser + 1; index < history.length; index += 1) {
    if (history[index]?.role !== 'assistant') continue;
    lastStart = index;
    if (fits(leadChars + userChars + suffix[index]!)) break;
  }
  if (lastStart < 0) return window(history, lead, [[lastUser, history.length]], tokens(leadChars + suffix[lastUser]!));
  return window(
    history,
    lead,
    [
      [lastUser, lastUser + 1],
      [lastStart, history.length],
    ],
    tokens(leadChars + userChars + suffix[lastStart]!),
  );
}

function window(
  history: readonly Message[],
  lead: number,
  ranges: [number, number][],
  estimatedTokens: number,
): RequestWindow {
  const messages = history.slice(0, lead);
  for (const [start, end] of ranges) for (let index = start; index < end; index += 1) messages.push(history[index]!);
  return { messages, omitted: history.length - messages.length, estimatedTokens };
}
