import { fnv1a } from './core.js';

/**
 * A stable id for a tool call whose id arrived empty from the DeepSeek stream (`translate.ts`
 * `closeBlock` emits `CallId(block.callId ?? '')`). The same request and block position always
 * give the same id, so a retried step names its calls the same way; the core's FNV-1a, no clock, no randomness.
 */
export function stableCallId(key: string, blockIndex: number): string {
  const text = `${key}#${blockIndex}`;
  const high = fnv1a(text, 0x811c9dc5).toString(16).padStart(8, '0');
  const low = fnv1a(text, 0x01000193 ^ 0x5bd1e995)
    .toString(16)
    .padStart(8, '0');
  return `call_unstuck_${high}${low}`;
}
