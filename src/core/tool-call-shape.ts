import type { ToolCall } from './messages.js';

/** A call the provider cannot deserialise: not an object, or without a `function` object carrying a name. */
export function isToolCallMalformed(call: unknown): boolean {
  if (call === null || typeof call !== 'object' || Array.isArray(call)) return true;
  const fn = (call as ToolCall).function;
  return fn === null || typeof fn !== 'object' || Array.isArray(fn) || typeof fn.name !== 'string';
}

/** True when text is JSON whose value is an object (not an array, string or null). */
export function isJsonObjectText(text: string): boolean {
  const first = text.trimStart()[0];
  if (first !== '{') return false;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  } catch {
    return false;
  }
}
