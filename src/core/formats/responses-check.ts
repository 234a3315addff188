import type { CheckOptions } from '../options.js';
import type { Violation } from '../violation.js';
import { isRecord } from './native-tag.js';
import { type CallRef, callRef, keyOf, outputRef } from './responses-calls.js';
import { isMessageItem, itemType } from './responses-input.js';
import { checkResponsesRequest } from './responses-request-rules.js';

/**
 * The Responses `input` rules, worded as the API words them (the rule catalogue,
 * test/fixtures/shared/rules.json, provider openai-responses; the texts match the catalogue's
 * `match` patterns). Responses pairs by call_id, not by position: an output may come anywhere after
 * its call.
 */
export const RESPONSES_TEXT = {
  /**
   * A call without its output. For a custom_tool_call the API says so in its own words (seen
   * through a router in front of Codex: diegosouzapw/OmniRoute#8946, "[400]: No tool output found
   * for custom tool call call_…"). No text is known for a local_shell_call or a client tool_search_call
   * left unanswered: they get the function_call text, which the catalogue's pattern reads.
   */
  unanswered: (id: string, type = 'function_call') =>
    type === 'custom_tool_call'
      ? `No tool output found for custom tool call ${id}.`
      : `No tool output found for function call ${id}.`,
  orphan: (id: string) => `No tool call found for function call output with call_id ${id}.`,
  duplicateItem: (id: string) =>
    `Duplicate item found with id ${id}. Remove duplicate items from your input and try again.`,
  duplicateCallId: (id: string) => `Duplicate 'call_id': ${id}`,
  /** No text is known for an approval response whose request is not in the input: worded as an orphan output. */
  approvalOrphan: (id: string) => `No tool call found for function call output with call_id ${id}.`,
  reasoningOrphan: (id: string) => `Item '${id}' of type 'reasoning' was provided without its required following item.`,
} as const;

/** What a reasoning item may be followed by: the item it produced (an assistant message, or a call of any kind). */
export function isProducedItem(item: unknown): boolean {
  if (isMessageItem(item)) return item['role'] === 'assistant';
  const type = itemType(item);
  return type.endsWith('_call');
}

export function checkResponsesInput(input: readonly unknown[], options: CheckOptions = {}): Violation[] {
  const violations: Violation[] = [];
  const report = (violation: Violation) => violations.push(violation);
  const itemIds = new Set<string>();
  const callIds = new Set<string>();
  const owed = new Map<string, { index: number; type: string; callId: string }>();
  const answered = new Set<string>();
  const approvals = new Set<string>();
  const approved = new Set<string>();
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
    const call = callRef(item);
    const output = call === undefined ? outputRef(item) : undefined;
    if (call !== undefined || output !== undefined) {
      const ref = (call ?? output) as CallRef;
      const callId = ref.callId;
      if (callId === '') {
        report({
          rule: 'tool-call-id-missing',
          index,
          message: `Missing required parameter: 'input[${index}].call_id'.`,
        });
        continue;
      }
      const key = keyOf(ref);
      if (call !== undefined) {
        if (callIds.has(key) && !duplicateItem)
          report({
            rule: 'tool-call-id-duplicate',
            index,
            toolCallId: callId,
            message: RESPONSES_TEXT.duplicateCallId(callId),
          });
        callIds.add(key);
        if (!owed.has(key)) owed.set(key, { index, type, callId });
      } else if (!callIds.has(key))
        // An output before its call is this too: the API pairs an output only with a call before it.
        report({ rule: 'tool-result-orphan', index, toolCallId: callId, message: RESPONSES_TEXT.orphan(callId) });
      else if (answered.has(key))
        report({
          rule: 'tool-result-duplicate',
          index,
          toolCallId: callId,
          message: RESPONSES_TEXT.duplicateCallId(callId),
        });
      else answered.add(key);
    } else if (type === 'mcp_approval_request' && typeof id === 'string' && id !== '') {
      approvals.add(id);
    } else if (type === 'mcp_approval_response') {
      const request = typeof item['approval_request_id'] === 'string' ? item['approval_request_id'] : '';
      if (!approvals.has(request))
        report({
          rule: 'tool-result-orphan',
          index,
          ...(request === '' ? {} : { toolCallId: request }),
          message: RESPONSES_TEXT.approvalOrphan(request),
        });
      else if (approved.has(request))
        report({
          rule: 'tool-result-duplicate',
          index,
          toolCallId: request,
          message: RESPONSES_TEXT.duplicateCallId(request),
        });
      else approved.add(request);
    } else if (type === 'reasoning' && !isProducedItem(input[index + 1])) {
      report({
        rule: 'reasoning-item-orphan',
        index,
        message: RESPONSES_TEXT.reasoningOrphan(typeof id === 'string' ? id : `input[${index}]`),
      });
    }
  }
  checkResponsesRequest(input, options, report);
  for (const [key, call] of owed) {
    if (!answered.has(key))
      report({
        rule: 'tool-calls-unanswered',
        index: call.index,
        toolCallId: call.callId,
        message: RESPONSES_TEXT.unanswered(call.callId, call.type),
      });
  }
  return violations.sort((a, b) => a.index - b.index);
}
