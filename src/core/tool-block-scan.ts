import { isMessage, type Message } from './messages.js';
import type { RuleContext } from './rules/rule.js';

/**
 * Finds the pairing violations in one pass. Calls and results are paired BY POSITION: the results
 * of an assistant message are the run of tool messages right after it. Never by a global set of
 * ids — llama.cpp returns one constant id for every call and Ollama reuses `call_0` across turns,
 * and those histories are valid. Ids are compared only inside a block (and across the request only
 * when `uniqueIdsAcrossRequest` says the provider demands it).
 */
export function scanToolBlocks(context: RuleContext, uniqueIdsAcrossRequest: boolean): void {
  const messages = context.messages;
  // The open block: ids still owed (id -> how many calls with it are unanswered) and those answered.
  let owner = -1;
  let owed: Map<string, number> | undefined;
  let answered: Map<string, number> | undefined;
  let missingIdCalls = 0;
  // Ids of calls left unanswered by closed blocks, to tell "not adjacent" from a plain orphan.
  const leftOpen = new Map<string, number>();
  const seenIds = uniqueIdsAcrossRequest ? new Map<string, number>() : undefined;

  const closeBlock = () => {
    if (owed !== undefined) {
      for (const [id, count] of owed) {
        if (count <= 0) continue;
        leftOpen.set(id, owner);
        context.report({ rule: 'tool-calls-unanswered', index: owner, toolCallId: id });
      }
    }
    if (missingIdCalls > 0) context.report({ rule: 'tool-calls-unanswered', index: owner, facts: { missing: missingIdCalls } });
    owner = -1;
    owed = undefined;
    answered = undefined;
    missingIdCalls = 0;
  };

  for (let index = 0; index < messages.length; index += 1) {
    const message: unknown = messages[index];
    if (!isMessage(message)) {
      closeBlock();
      context.report({ rule: 'message-malformed', index, facts: { got: describe(message) } });
      continue;
    }
    if (message.role === 'tool') {
      visitResult(message, index);
      continue;
    }
    closeBlock();
    if (message.role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length > 0) openBlock(message, index);
  }
  closeBlock();

  function openBlock(message: Message, index: number): void {
    owner = index;
    owed = new Map();
    answered = new Map();
    const calls = message.tool_calls ?? [];
    for (let position = 0; position < calls.length; position += 1) {
      const id = calls[position]?.id;
      if (typeof id !== 'string' || id === '') {
        missingIdCalls += 1;
        context.report({ rule: 'tool-call-id-missing', index, facts: { call: position } });
        continue;
      }
      const count = owed.get(id) ?? 0;
      if (count > 0) context.report({ rule: 'tool-call-id-duplicate', index, toolCallId: id });
      else if (seenIds?.has(id) === true) context.report({ rule: 'tool-call-id-duplicate', index, toolCallId: id, facts: { firstIndex: seenIds.get(id) ?? 0 } });
      seenIds?.set(id, index);
      owed.set(id, count + 1);
    }
    // The same call also encoded as an Anthropic tool_use content part (corpus 043: gateways chained).
    if (Array.isArray(message.content)) {
      for (const part of message.content) {
        if (part?.type === 'tool_use' && typeof part['id'] === 'string' && owed.has(part['id'])) context.report({ rule: 'tool-call-id-duplicate', index, toolCallId: part['id'] });
      }
    }
  }

  function visitResult(message: Message, index: number): void {
    const id = message.tool_call_id;
    const hasId = typeof id === 'string' && id !== '';
    if (owed === undefined || answered === undefined) {
      if (!hasId) context.report({ rule: 'tool-call-id-missing', index });
      const previousRole = index > 0 && isMessage(messages[index - 1]) ? (messages[index - 1] as Message).role : 'none';
      if (hasId && leftOpen.has(id)) context.report({ rule: 'tool-result-not-adjacent', index, toolCallId: id, facts: { callIndex: leftOpen.get(id) ?? 0, previousRole } });
      else context.report({ rule: 'tool-result-orphan', index, ...(hasId ? { toolCallId: id } : {}), facts: { previousRole } });
      return;
    }
    if (!hasId) {
      context.report({ rule: 'tool-call-id-missing', index });
      if (missingIdCalls > 0) missingIdCalls -= 1;
      return;
    }
    const count = owed.get(id);
    if (count !== undefined && count > 0) {
      owed.set(id, count - 1);
      if (!answered.has(id)) answered.set(id, index);
      return;
    }
    if (answered.has(id)) {
      context.report({ rule: 'tool-result-duplicate', index, toolCallId: id, facts: { firstIndex: answered.get(id) ?? 0 } });
      return;
    }
    context.report({ rule: 'tool-result-id-mismatch', index, toolCallId: id });
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object without a string role';
  return typeof value;
}
