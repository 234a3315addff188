/**
 * How a converted message remembers the native element it came from. The tag is an enumerable
 * symbol-keyed property: JSON never sees it, the core's shallow copies (`{ ...message }`) carry it,
 * and converting back can tell an untouched message (the very object `from` made) from a copy.
 */
const NATIVE = Symbol('unstuck.native');

export function setTag<T extends object, Tag>(target: T, tag: Tag): T {
  (target as Record<symbol, unknown>)[NATIVE] = tag;
  return target;
}

export function tagOf<Tag>(target: unknown): Tag | undefined {
  if (target === null || typeof target !== 'object') return undefined;
  return (target as Record<symbol, unknown>)[NATIVE] as Tag | undefined;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Arguments text back to an object: what providers other than OpenAI want (kept whole when it is not an object). */
export function parseArguments(text: unknown): Record<string, unknown> {
  if (typeof text !== 'string' || text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (isRecord(value)) return value;
  } catch {
    // not JSON: kept whole below
  }
  return { unstuck_unparsed_arguments: text };
}

/** JSON text of a call's input, as OpenAI chat carries it. */
export function argumentsText(input: unknown): string {
  return JSON.stringify(input ?? {});
}

/**
 * The positions of the calls that came from each native block (or part), in order; `take(block)`
 * hands out the first not yet taken, -1 when none is left. Putting the calls of a message back
 * where their blocks stood costs one map lookup per block, not a search of every call (a message
 * of 10^5 calls stays linear).
 */
export function positionsByOrigin<T>(
  calls: readonly T[],
  originOf: (call: T) => unknown,
): { take(origin: unknown): number } {
  const byOrigin = new Map<unknown, { positions: number[]; next: number }>();
  for (let position = 0; position < calls.length; position += 1) {
    const origin = originOf(calls[position] as T);
    if (origin === undefined) continue;
    const queue = byOrigin.get(origin);
    if (queue === undefined) byOrigin.set(origin, { positions: [position], next: 0 });
    else queue.positions.push(position);
  }
  return {
    take(origin) {
      const queue = byOrigin.get(origin);
      if (queue === undefined || queue.next === queue.positions.length) return -1;
      return queue.positions[queue.next++] as number;
    },
  };
}
