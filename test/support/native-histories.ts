import assert from 'node:assert/strict';
import type { Change, FormatName } from '../../src/index.js';

/**
 * What a repair of a native history must never lose silently: every text, call input and result
 * of every input element is in the output (as a substring: merged, moved or turned into text), or
 * a change names that input index.
 */
export function nativeTexts(format: FormatName, element: unknown): string[] {
  const texts: string[] = [];
  const add = (value: unknown) => {
    if (typeof value === 'string') {
      if (value.trim() !== '') texts.push(value);
      return;
    }
    if (Array.isArray(value)) {
      for (const part of value)
        if (part !== null && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string')
          add((part as { text: string }).text);
      return;
    }
    if (value !== null && typeof value === 'object' && Object.keys(value).length > 0) texts.push(JSON.stringify(value));
  };
  if (element === null || typeof element !== 'object') return texts;
  const record = element as Record<string, unknown>;
  if (format === 'anthropic-messages') {
    const content = record['content'];
    if (typeof content === 'string') add(content);
    for (const block of Array.isArray(content) ? (content as Record<string, unknown>[]) : []) {
      if (block?.['type'] === 'text') add(block['text']);
      if (block?.['type'] === 'thinking') add(block['thinking']);
      if (block?.['type'] === 'tool_use') add(block['input']);
      if (block?.['type'] === 'tool_result') add(block['content']);
    }
  } else if (format === 'gemini-contents') {
    for (const part of Array.isArray(record['parts']) ? (record['parts'] as Record<string, unknown>[]) : []) {
      add(part?.['text']);
      const call = (part?.['functionCall'] ?? part?.['function_call']) as Record<string, unknown> | undefined;
      if (call !== undefined) add(call['args']);
      const response = (part?.['functionResponse'] ?? part?.['function_response']) as
        | Record<string, unknown>
        | undefined;
      if (response !== undefined) add(response['response']);
    }
  } else {
    add(record['content']);
    if (typeof record['arguments'] === 'string' && record['arguments'] !== '{}') add(record['arguments']);
    add(record['output']);
    // The other call kinds' payloads: a custom tool's input, a shell action, a tool search's found tools.
    add(record['input']);
    add(record['action']);
    add(record['tools']);
  }
  return texts;
}

export function assertNativeNothingLost(
  format: FormatName,
  input: readonly unknown[],
  output: readonly unknown[],
  changes: readonly Change[],
): void {
  const named = new Set(changes.map((change) => change.index));
  const haystack = output.map((element) => nativeTexts(format, element).join('\u0000')).join('\u0001');
  input.forEach((element, index) => {
    if (named.has(index)) return;
    for (const text of nativeTexts(format, element)) {
      const found = haystack.includes(text) || haystack.includes(JSON.stringify(text).slice(1, -1));
      assert.ok(found, `input element ${index} lost ${JSON.stringify(text.slice(0, 80))} without a change naming it`);
    }
  });
}

/** Elements no change names are the very same objects in the output. */
export function assertNativeUntouchedSame(
  input: readonly unknown[],
  output: readonly unknown[],
  changes: readonly Change[],
): void {
  const named = new Set(changes.map((change) => change.index));
  const present = new Set(output);
  input.forEach((element, index) => {
    if (named.has(index) || element === null || typeof element !== 'object') return;
    assert.ok(present.has(element), `input element ${index} had no change but is not the same object in the output`);
  });
}
