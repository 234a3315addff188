import assert from 'node:assert/strict';
import { type Change, isMessage, type Message, textOf } from '../../src/index.js';

/** The texts a message carries that a repair must never lose silently. */
export function textsOf(message: Message): string[] {
  const texts: string[] = [];
  const content = textOf(message.content);
  if (content !== '') texts.push(content);
  if (typeof message.reasoning_content === 'string' && message.reasoning_content !== '')
    texts.push(message.reasoning_content);
  for (const call of message.tool_calls ?? []) {
    const args = call?.function?.arguments;
    if (typeof args === 'string' && args !== '' && args !== '{}') texts.push(args);
  }
  return texts;
}

/**
 * Every text of every input message is somewhere in the output (moved, merged or turned into
 * text: as a substring), or a change names that input index.
 */
export function assertNothingLostSilently(
  input: readonly Message[],
  output: readonly Message[],
  changes: readonly Change[],
): void {
  const named = new Set(changes.map((change) => change.index));
  const haystack = output.map((message) => textsOf(message).join('\u0000')).join('\u0001');
  input.forEach((message, index) => {
    if (!isMessage(message) || named.has(index)) return;
    for (const text of textsOf(message)) {
      // JSON-object arguments may have been wrapped; the original string stays inside, escaped.
      const found = haystack.includes(text) || haystack.includes(JSON.stringify(text).slice(1, -1));
      assert.ok(
        found,
        `input message ${index} (${message.role}) lost ${JSON.stringify(text.slice(0, 80))} without a change naming it`,
      );
    }
  });
}

/** Messages no change names are the very same objects in the output. */
export function assertUntouchedAreSameObjects(
  input: readonly Message[],
  output: readonly Message[],
  changes: readonly Change[],
): void {
  const named = new Set(changes.map((change) => change.index));
  const present = new Set(output);
  input.forEach((message, index) => {
    if (named.has(index)) return;
    assert.ok(present.has(message), `input message ${index} had no change but is not the same object in the output`);
  });
}

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
