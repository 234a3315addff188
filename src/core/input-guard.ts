import { isUnstuckError, UnstuckError } from './errors.js';

/**
 * The library's promise for bad input: a typed `UnstuckError` (code INPUT_INVALID) or a violation,
 * never an untyped throw. `messages` must be an array; whatever else goes wrong while
 * reading it (a cycle or a BigInt met by JSON.stringify, a getter that throws) becomes one error
 * saying what, with the original as `cause`. `pass` lets a caller's own control-flow value through.
 */
export function guardInput<T>(what: string, messages: unknown, run: () => T, pass?: unknown): T {
  if (!Array.isArray(messages))
    throw new UnstuckError('INPUT_INVALID', `${what}: expected an array of messages, got ${describe(messages)}`);
  try {
    return run();
  } catch (error) {
    if (error === pass || isUnstuckError(error)) throw error;
    throw new UnstuckError('INPUT_INVALID', `${what}: the messages are not plain JSON data (${reason(error)})`, {
      cause: error,
    });
  }
}

function reason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  if (/circular/i.test(text)) return 'a value refers back to itself, which JSON cannot hold';
  if (/BigInt/.test(text)) return 'a BigInt, which JSON cannot hold';
  return text.split('\n')[0] ?? text;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  return typeof value === 'object' ? 'an object' : typeof value;
}
