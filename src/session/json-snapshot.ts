/**
 * What some values' JSON was when they were saved, kept cheaply: a copy of their objects and
 * arrays that shares their strings (strings are immutable, so sharing them costs nothing and
 * comparing an unchanged one is a pointer check). A store uses it to know that a block of
 * messages it already wrote has not changed, without writing its JSON again: a caller may replace
 * messages (copy on write) or change them in place, and both must reach the file.
 *
 * Only plain JSON data is snapshotted: primitives, arrays, and objects whose prototype is
 * `Object.prototype` or null. Anything else (a class instance, a Date, a `toJSON`, a function, a
 * bigint) makes `takeSnapshot` give undefined, and the caller writes the block every time.
 */

/** A snapshot: opaque to callers. */
export type Snapshot = readonly unknown[];

const NOT_PLAIN = Symbol('not plain JSON data');

/** The snapshot of `values`, or undefined when any of them is not plain JSON data. */
export function takeSnapshot(values: readonly unknown[]): Snapshot | undefined {
  const copy = copyOf(values);
  return copy === NOT_PLAIN ? undefined : (copy as Snapshot);
}

/**
 * True only if `JSON.stringify(values)` writes what it wrote when `snapshot` was taken: the same
 * keys in the same order, the same primitives, and no object that is not plain where a plain one
 * was. It can say false for values whose JSON did not change (NaN, a string replaced by an equal
 * one costs a comparison, not a false); it never says true for values whose JSON did.
 */
export function matchesSnapshot(values: readonly unknown[], snapshot: Snapshot): boolean {
  return matches(values, snapshot);
}

function copyOf(value: unknown): unknown {
  if (value === null) return null;
  const type = typeof value;
  if (type === 'string' || type === 'number' || type === 'boolean' || type === 'undefined') return value;
  if (type !== 'object') return NOT_PLAIN;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return NOT_PLAIN;
    const copy = new Array<unknown>(value.length);
    for (let index = 0; index < value.length; index += 1) {
      const item = copyOf(value[index]);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      copy[index] = item;
    }
    return copy;
  }
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return NOT_PLAIN;
  const copy: Record<string, unknown> = {};
  // Object.keys: the own enumerable string keys, in the order JSON.stringify writes them.
  for (const key of Object.keys(value as object)) {
    const item = copyOf((value as Record<string, unknown>)[key]);
    if (item === NOT_PLAIN) return NOT_PLAIN;
    copy[key] = item;
  }
  return copy;
}

function matches(value: unknown, snapshot: unknown): boolean {
  // Same primitive, or the same string (the usual case: shared, so a pointer check).
  if (value === snapshot) return value === null || typeof value !== 'object';
  if (value === null || snapshot === null || typeof value !== 'object' || typeof snapshot !== 'object') return false;
  if (Array.isArray(snapshot)) {
    if (!Array.isArray(value) || Object.getPrototypeOf(value) !== Array.prototype || value.length !== snapshot.length)
      return false;
    for (let index = 0; index < snapshot.length; index += 1) if (!matches(value[index], snapshot[index])) return false;
    return true;
  }
  if (Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return false;
  const keys = Object.keys(snapshot);
  const valueKeys = Object.keys(value);
  if (valueKeys.length !== keys.length) return false;
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index]!;
    if (
      valueKeys[index] !== key ||
      !matches((value as Record<string, unknown>)[key], (snapshot as Record<string, unknown>)[key])
    )
      return false;
  }
  return true;
}
