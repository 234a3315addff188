import { isMessage, type Message } from './messages.js';
import type { RuleContext } from './rules/rule.js';

/**
 * Finds the pairing violations in one pass. Calls and results are paired BY POSITION: the results
 * of an assistant message are the run of tool messages right after it. Never by a global set of
 * ids — llama.cpp returns one constant id for every call and Ollama reuses `call_0` across turns,
 * and those histories are valid. Ids are compared only inside a block (and across the request only
 * when `uniqueIdsAcrossRequest` says the provider demands it).
 *
 * The open block's state lives in arrays reused from block to block: a block holds a few calls,
 * where a linear search beats allocating maps for every assistant message.
 */
export function scanToolBlocks(context: RuleContext, uniqueIdsAcrossRequest: boolean): void {
  const messages = context.messages;
  let owner = -1; // index of the open block's assistant message, -1 when no block is open
  const callIds: string[] = []; // the block's call ids ('' for a call without one), the first `calls` entries
  const answeredAt: number[] = []; // per call: index of the result that answered it, -1 while owed
  let calls = 0;
  const indexOfId = (id: string) => {
    for (let call = 0; call < calls; call += 1) if (callIds[call] === id) return call;
    return -1;
  };
  let missingIdCalls = 0;
  // Ids of calls left unanswered by closed blocks, to tell "not adjacent" from a plain orphan.
  const leftOpen = new Map<string, number>();
  const seenIds = uniqueIdsAcrossRequest ? new Map<string, number>() : undefined;

  const closeBlock = () => {
    if (owner === -1) return;
    for (let call = 0; call < calls; call += 1) {
      const id = callIds[call] as string;
      if (id === '' || answeredAt[call] !== -1) continue;
      const first = indexOfId(id);
      if (first !== call && answeredAt[first] === -1) continue; // one report per id: it went with the first call of that id
      leftOpen.set(id, owner);
      context.report({ rule: 'tool-calls-unanswered', index: owner, toolCallId: id });
    }
    if (missingIdCalls > 0) context.report({ rule: 'tool-calls-unanswered', index: owner, facts: { missing: missingIdCalls } });
    owner = -1;
    calls = 0;
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
    const toolCalls = message.tool_calls ?? [];
    for (let position = 0; position < toolCalls.length; position += 1) {
      const id = toolCalls[position]?.id;
      if (typeof id !== 'string' || id === '') {
        missingIdCalls += 1;
        callIds[calls] = '';
        answeredAt[calls] = -1;
        calls += 1;
        context.report({ rule: 'tool-call-id-missing', index, facts: { call: position } });
        continue;
      }
      if (indexOfId(id) !== -1) context.report({ rule: 'tool-call-id-duplicate', index, toolCallId: id });
      else if (seenIds?.has(id) === true) context.report({ rule: 'tool-call-id-duplicate', index, toolCallId: id, facts: { firstIndex: seenIds.get(id) ?? 0 } });
      seenIds?.set(id, index);
      callIds[calls] = id;
      answeredAt[calls] = -1;
      calls += 1;
    }
    // The same call also encoded as an Anthropic tool_use content part (corpus 043: gateways chained).
    if (Array.isArray(message.content)) {
      for (const part of message.content) {
        if (part?.type === 'tool_use' && typeof part['id'] === 'string' && indexOfId(part['id']) !== -1) context.report({ rule: 'tool-call-id-duplicate', index, toolCallId: part['id'] });
      }
    }
  }

  function visitResult(message: Message, index: number): void {
    const id = message.tool_call_id;
    const hasId = typeof id === 'string' && id !== '';
    if (owner === -1) {
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
    let firstAnswer = -1;
    for (let call = 0; call < calls; call += 1) {
      if (callIds[call] !== id) continue;
      const at = answeredAt[call] as number;
      if (at === -1) {
        answeredAt[call] = index;
        return;
      }
      if (firstAnswer === -1) firstAnswer = at;
    }
    if (firstAnswer !== -1) context.report({ rule: 'tool-result-duplicate', index, toolCallId: id, facts: { firstIndex: firstAnswer } });
    else context.report({ rule: 'tool-result-id-mismatch', index, toolCallId: id });
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object without a string role';
  return typeof value;
}
