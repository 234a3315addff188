import type { Change } from '../changes.js';
import type { RepairOptions, RepairResult } from '../options.js';
import type { RuleId } from '../rule-ids.js';
import { checkAnthropicMessages } from './anthropic-check.js';
import {
  buildAnthropicMessages,
  fromAnthropicMessages,
  isToolResultBlock,
  isToolUseBlock,
} from './anthropic-messages.js';
import { fixBlocks, fixFinal, idRemapping } from './anthropic-request-repair.js';
import { type NativeEntry, preview, repairThroughCore } from './core-pass.js';
import { isRecord } from './native-tag.js';
import { pairingProfile } from './pairing-profile.js';

/** What the core's pairing repair fixes; the rest is fixed on the native form. */
const PAIRING = new Set<RuleId>([
  'tool-calls-unanswered',
  'tool-result-not-first',
  'tool-results-split',
  'tool-result-orphan',
  'tool-result-id-mismatch',
  'tool-result-duplicate',
  'tool-call-id-duplicate',
  'tool-call-id-missing',
  'message-malformed',
]);

const WHY: Partial<Record<RuleId, string>> = {
  'thinking-block-missing':
    'a thinking block carries a signature only Anthropic can issue, so repair cannot recreate it: restore the thinking blocks from the original response, or send the request with thinking disabled',
  'system-role-in-messages':
    "a system message belongs in the request's top-level `system` parameter; moving it there is the caller's decision",
  'role-unknown': 'the role has no equivalent in the Messages API',
  'empty-messages': 'there are no messages to send',
  'ends-with-assistant':
    'the model does not take an assistant prefill, and dropping the final assistant message loses what the caller wrote: repair at level strongest drops it, or send the request to a model that supports prefill',
};

/**
 * Anthropic Messages repaired: empty text blocks dropped, blocks fixed where they stand (a call or
 * result in the wrong role's message kept as text, an input that is not an object made one, an id
 * off the API's pattern remapped, thinking blocks put first), empty messages dropped, consecutive
 * same-role messages merged (split parallel results come together, tool_result blocks first),
 * then the core's pairing repair on the converted form, then the turns settled again and the
 * final position fixed for the request's `thinking` and model (anthropic-request-repair.ts).
 */
export function repairAnthropicMessages(input: readonly unknown[], options: RepairOptions = {}): RepairResult<unknown> {
  if (checkAnthropicMessages(input, options).length === 0)
    return { messages: input as unknown[], changes: [], remaining: [], changed: false };
  const changes: Change[] = [];
  let entries: NativeEntry[] = [];
  const remapped = idRemapping(input);
  input.forEach((value, origin) => {
    if (!isRecord(value) || typeof value['role'] !== 'string') {
      changes.push({ kind: 'malformed-dropped', index: origin, detail: `not a message object: ${preview(value)}` });
      return;
    }
    entries.push({ value: fixBlocks(dropEmptyTextBlocks(value, origin, changes), origin, remapped, changes), origin });
  });
  entries = settleTurns(entries, changes);
  entries = repairThroughCore(
    entries,
    { from: fromAnthropicMessages, build: buildAnthropicMessages },
    {
      profile: pairingProfile('anthropic', true),
      unanswered: options.unanswered ?? 'synthesize',
      orphans: options.orphans ?? 'to-user',
    },
    changes,
    (values) => {
      const pairing = checkAnthropicMessages(values).filter((violation) => PAIRING.has(violation.rule));
      return {
        damaged: pairing.map((violation) => violation.index),
        whole: pairing.some(
          (violation) => violation.rule === 'tool-call-id-duplicate' || violation.rule === 'tool-call-id-missing',
        ),
        opensBlock: (value) =>
          isRecord(value) &&
          value['role'] === 'assistant' &&
          Array.isArray(value['content']) &&
          value['content'].some(isToolUseBlock),
      };
    },
  );
  entries = fixFinal(settleTurns(entries, changes), options, changes);
  const messages = changes.length === 0 ? (input as unknown[]) : entries.map((entry) => entry.value);
  const remaining = checkAnthropicMessages(messages, options).map((violation) => ({
    ...violation,
    why: WHY[violation.rule] ?? 'no repair strategy covers this case',
  }));
  return { messages, changes, remaining, changed: changes.length > 0 };
}

function dropEmptyTextBlocks(
  message: Record<string, unknown>,
  origin: number,
  changes: Change[],
): Record<string, unknown> {
  const content = message['content'];
  if (!Array.isArray(content)) return message;
  const kept = content.filter(
    (block) =>
      !(
        isRecord(block) &&
        block['type'] === 'text' &&
        (typeof block['text'] !== 'string' || block['text'].trim() === '')
      ),
  );
  if (kept.length === content.length) return message;
  changes.push({
    kind: 'block-dropped',
    index: origin,
    detail: `${content.length - kept.length} empty text block(s) dropped: the API rejects text blocks without text`,
  });
  return { ...message, content: kept };
}

function isEmpty(content: unknown): boolean {
  return (
    content === undefined || content === null || content === '' || (Array.isArray(content) && content.length === 0)
  );
}

/** Empty messages dropped (a final assistant prefill may stay empty); consecutive same-role messages merged. */
function settleTurns(entries: NativeEntry[], changes: Change[]): NativeEntry[] {
  const kept = entries.filter((entry, position) => {
    const message = entry.value as Record<string, unknown>;
    if (!isEmpty(message['content']) || (position === entries.length - 1 && message['role'] === 'assistant'))
      return true;
    changes.push({
      kind: 'empty-message-dropped',
      index: entry.origin,
      detail: `${String(message['role'])} message with no content`,
    });
    return false;
  });
  const out: NativeEntry[] = [];
  // The blocks of a run of same-role messages, gathered once and ordered when the run ends: merging
  // message by message would copy the growing run each time (quadratic in a run of 10^5 messages).
  let run: unknown[] | undefined;
  const endRun = () => {
    const head = out[out.length - 1];
    if (run === undefined || head === undefined) return;
    // The API wants a user message's tool_result blocks before anything else in it, and an
    // assistant message that has thinking blocks to open with them (CATALOGUE anthropic/thinking-block-not-first).
    // One stable partition of the whole run is the same as one per merge.
    const leads = (head.value as Record<string, unknown>)['role'] === 'user' ? isToolResultBlock : isThinkingBlock;
    head.value = {
      ...(head.value as Record<string, unknown>),
      content: [...run.filter(leads), ...run.filter((block) => !leads(block))],
    };
    run = undefined;
  };
  for (const entry of kept) {
    const previous = out[out.length - 1];
    const message = entry.value as Record<string, unknown>;
    const role = message['role'];
    if (
      previous === undefined ||
      (role !== 'user' && role !== 'assistant') ||
      (previous.value as Record<string, unknown>)['role'] !== role
    ) {
      endRun();
      out.push(entry);
      continue;
    }
    run ??= blocksOf((previous.value as Record<string, unknown>)['content']).slice();
    for (const block of blocksOf(message['content'])) run.push(block);
    const before =
      previous.added === true
        ? `the results added for the calls of input index ${previous.origin}`
        : `the ${String(role)} message before it (input index ${previous.origin})`;
    changes.push({
      kind: 'messages-merged',
      index: entry.origin,
      detail: `${String(role)} message merged into ${before}: roles must alternate`,
    });
    if (previous.added !== true)
      changes.push({
        kind: 'messages-merged',
        index: previous.origin,
        detail: `received the blocks of the ${String(role)} message at input index ${entry.origin}, which followed it`,
      });
  }
  endRun();
  return out;
}

function blocksOf(content: unknown): unknown[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return Array.isArray(content) ? content : [];
}

function isThinkingBlock(block: unknown): boolean {
  return isRecord(block) && (block['type'] === 'thinking' || block['type'] === 'redacted_thinking');
}
