import type { Message } from '../core/index.js';

/** The call ids of messages[start, end). */
export function collectIds(messages: readonly Message[], start: number, end: number): Set<string> {
  const ids = new Set<string>();
  for (let index = start; index < end; index += 1) {
    const message = messages[index]!;
    for (const call of message.tool_calls ?? []) if (typeof call?.id === 'string') ids.add(call.id);
  }
  return ids;
}

/** Whether the turn's calls reuse an id from earlier in the history (some providers want them unique per request). */
export function reusesIds(messages: readonly Message[], tailStart: number, priorIds: ReadonlySet<string>): boolean {
  if (priorIds.size === 0) return false;
  for (let index = Math.max(0, tailStart); index < messages.length; index += 1) {
    for (const call of messages[index]!.tool_calls ?? [])
      if (typeof call?.id === 'string' && priorIds.has(call.id)) return true;
  }
  return false;
}
