import type { Violation } from '../violation.js';
import { isRecord } from './native-tag.js';
import { isMessageItem, itemType } from './responses-input.js';

/**
 * The Responses `input` rules, worded as the API words them (the rule catalogue,
 * test/fixtures/shared/rules.json, provider openai-responses; the texts match the catalogue's
 * `match` patterns). Responses pairs by call_id, not by position: an output may come anywhere after
 * its call.
 */
export const RESPONSES_TEXT = {
  unanswered: (id: string) => `No tool output found for function call ${id}.`,
  orphan: (id: string) => `No tool call found for function call output with call_id ${id}.`,
  duplicateItem: (id: string) =>
    `Duplicate item found with id ${id}. Remove duplicate items from your input and try again.`,
  duplicateCallId: (id: string) => `Duplicate 'call_id': ${id}`,
  reasoningOrphan: (id: string) => `Item '${id}' of type 'reasoning' was provided without its required following item.`,
} as const;

/** What a reasoning item may be followed by: the item it produced (an assistant message, or a call of any kind). */
export function isProducedItem(item: unknown): boolean {
  if (isMessageItem(item)) return item['role'] === 'assistant';
  const type = itemType(item);
  return type.endsWith('_call');
}

export function checkResponsesInput(input: readonly unknown[]): Violation[] {
  const violations: Violation[] = [];
  const report = (violation: Violation) => violations.push(violation);
  const itemIds = new Set<string>();
  const callIds = new Set<string>();
  const owed = new Map<string, number>();
  const answered = new Set<string>();
  for (let index = 0; index < input.length; index += 1) {
    const item = input[index];
    const type = itemType(item);
    if (!isRecord(item) || type === '') {
      report({
        rule: 'message-malformed',
        index,
        message: `Invalid type for 'input[${index}]': expected an input item object with a type.`,
      });
      continue;
    }
    const id = item['id'];
    let duplicateItem = false;
    if (typeof id === 'string' && id !== '') {
      duplicateItem = itemIds.has(id);
      if (duplicateItem)
        report({ rule: 'tool-call-id-duplicate', index, toolCallId: id, message: RESPONSES_TEXT.duplicateItem(id) });
      itemIds.add(id);
    }
    const callId = item['call_id'];
    if (type === 'function_call') {
      if (typeof callId !== 'string' || callId === '') {
        report({
          rule: 'tool-call-id-missing',
          index,
          message: `Missing required parameter: 'input[${index}].call_id'.`,
        });
        continue;
      }
      if (callIds.has(callId) && !duplicateItem) {
        report({
          rule: 'tool-call-id-duplicate',
          index,
          toolCallId: callId,
          message: RESPONSES_TEXT.duplicateCallId(callId),
        });
      }
      callIds.add(callId);
      if (!owed.has(callId)) owed.set(callId, index);
    } else if (type === 'function_call_output') {
      if (typeof callId !== 'string' || callId === '') {
        report({
          rule: 'tool-call-id-missing',
          index,
          message: `Missing required parameter: 'input[${index}].call_id'.`,
        });
        continue;
      }
      if (!callIds.has(callId))
        report({ rule: 'tool-result-orphan', index, toolCallId: callId, message: RESPONSES_TEXT.orphan(callId) });
      else if (answered.has(callId))
        report({
          rule: 'tool-result-duplicate',
          index,
          toolCallId: callId,
          message: RESPONSES_TEXT.duplicateCallId(callId),
        });
      else answered.add(callId);
    } else if (type === 'reasoning' && !isProducedItem(input[index + 1])) {
      report({
        rule: 'reasoning-item-orphan',
        index,
        message: RESPONSES_TEXT.reasoningOrphan(typeof id === 'string' ? id : `input[${index}]`),
      });
    }
  }
  for (const [callId, index] of owed) {
    if (!answered.has(callId))
      report({ rule: 'tool-calls-unanswered', index, toolCallId: callId, message: RESPONSES_TEXT.unanswered(callId) });
  }
  return violations.sort((a, b) => a.index - b.index);
}
