import { isMessage, type Message, messageShapeProblem, type ToolCall } from './messages.js';
import { malformedFinding } from './rules/message-malformed.js';
import type { RuleContext } from './rules/rule.js';

/**
 * Finds the pairing violations in one pass. Calls and results are paired BY POSITION: the results
 * of an assistant message are the run of tool messages right after it. Never by a global set of
 * ids — llama.cpp returns one constant id for every call and Ollama reuses `call_0` across turns,
 * and those histories are valid. Ids are compared only inside a block (and across the request only
 * when `uniqueIdsAcrossRequest` says the provider demands it).
 *
 * The open block's state lives in arrays reused from block to block. A block of a few calls looks
 * ids up by a linear search, which beats allocating maps for every assistant message; a block of
 * more than WIDE calls indexes them (the first call of each id, and the next call with the same id),
 * so one message of 10^5 calls costs 10^5 steps, not 10^10 (one 6.4 MB request of 5x10^4 calls
 * once froze the proxy).
 */
/** Meets every entry that is a message, in order, with the fields the scan read from it (`calls`: an assistant's). */
export interface MessageVisitor {
  visit(message: Message, index: number, role: string, content: unknown, calls: unknown): void;
}

export function scanToolBlocks(
  context: RuleContext,
  uniqueIdsAcrossRequest: boolean,
  wideAbove = WIDE,
  visitor?: MessageVisitor,
): void {
  const messages = context.messages;
  const nativeContent = context.profile.nativeContent === true;
  let owner = -1; // index of the open block's assistant message, -1 when no block is open
  const callIds: string[] = []; // the block's call ids ('' for a call without one), the first `calls` entries
  const answeredAt: number[] = []; // per call: index of the result that answered it, -1 while owed
  let calls = 0;
  // Wide blocks only: id -> its first call; per call, the next call with the same id (-1: none);
  // per first call, the first of its id's calls still owed (-1: all answered).
  let wide = false;
  const firstCall = new Map<string, number>();
  const nextSame: number[] = [];
  const owedOf: number[] = [];
  const indexOfId = (id: string) => {
    if (wide) return firstCall.get(id) ?? -1;
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
    if (missingIdCalls > 0)
      context.report({ rule: 'tool-calls-unanswered', index: owner, facts: { missing: missingIdCalls } });
    owner = -1;
    calls = 0;
    missingIdCalls = 0;
    if (wide) {
      wide = false;
      firstCall.clear();
      nextSame.length = 0;
      owedOf.length = 0;
    }
  };

  // One pass: each message is paired here and, through `visit`, met by the per-message rules. Each field is read
  // once and handed on (role, content, tool_calls), since on a clean history these reads are most of the cost.
  for (let index = 0; index < messages.length; index += 1) {
    const message: unknown = messages[index];
    const role = message !== null && typeof message === 'object' ? (message as { role?: unknown }).role : undefined;
    if (typeof role !== 'string' || Array.isArray(message)) {
      closeBlock();
      context.report(malformedFinding(index, messageShapeProblem(message) ?? { path: '', got: 'something else' }));
      continue;
    }
    const entry = message as Message;
    const content = entry.content;
    // A string (or no content) is the shape of nearly every message: only other values are looked into.
    if (typeof content !== 'string' && content !== null && content !== undefined && !nativeContent) {
      const problem = messageShapeProblem(entry);
      if (problem !== undefined) {
        closeBlock();
        context.report(malformedFinding(index, problem));
        visitor?.visit(entry, index, role, content, entry.tool_calls);
        continue;
      }
    }
    let calls: unknown;
    if (role === 'tool') visitResult(entry, index);
    else {
      if (owner !== -1) closeBlock();
      if (role === 'assistant') {
        calls = entry.tool_calls;
        if (Array.isArray(calls) && calls.length > 0) openBlock(entry, calls as ToolCall[], index);
      }
    }
    visitor?.visit(entry, index, role, content, calls);
  }
  closeBlock();

  function openBlock(message: Message, toolCalls: readonly ToolCall[], index: number): void {
    owner = index;
    wide = toolCalls.length > wideAbove;
    const lastOfId = wide ? new Map<string, number>() : undefined;
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
      else if (seenIds?.has(id) === true)
        context.report({
          rule: 'tool-call-id-duplicate',
          index,
          toolCallId: id,
          facts: { firstIndex: seenIds.get(id) ?? 0 },
        });
      seenIds?.set(id, index);
      if (lastOfId !== undefined) {
        const previous = lastOfId.get(id);
        if (previous === undefined) {
          firstCall.set(id, calls);
          owedOf[calls] = calls;
        } else nextSame[previous] = calls;
        nextSame[calls] = -1;
        lastOfId.set(id, calls);
      }
      callIds[calls] = id;
      answeredAt[calls] = -1;
      calls += 1;
    }
    // The same call also encoded as an Anthropic tool_use content part (corpus 043: gateways chained).
    if (Array.isArray(message.content)) {
      for (const part of message.content) {
        if (part?.type === 'tool_use' && typeof part['id'] === 'string' && indexOfId(part['id']) !== -1)
          context.report({ rule: 'tool-call-id-duplicate', index, toolCallId: part['id'] });
      }
    }
  }

  function visitResult(message: Message, index: number): void {
    const id = message.tool_call_id;
    const hasId = typeof id === 'string' && id !== '';
    if (owner === -1) {
      if (!hasId) context.report({ rule: 'tool-call-id-missing', index });
      const previousRole = index > 0 && isMessage(messages[index - 1]) ? (messages[index - 1] as Message).role : 'none';
      if (hasId && leftOpen.has(id))
        context.report({
          rule: 'tool-result-not-adjacent',
          index,
          toolCallId: id,
          facts: { callIndex: leftOpen.get(id) ?? 0, previousRole },
        });
      else
        context.report({
          rule: 'tool-result-orphan',
          index,
          ...(hasId ? { toolCallId: id } : {}),
          facts: { previousRole },
        });
      return;
    }
    if (!hasId) {
      context.report({ rule: 'tool-call-id-missing', index });
      if (missingIdCalls > 0) missingIdCalls -= 1;
      return;
    }
    if (wide) {
      const first = firstCall.get(id);
      if (first === undefined) {
        context.report({ rule: 'tool-result-id-mismatch', index, toolCallId: id });
        return;
      }
      const owed = owedOf[first] as number;
      if (owed === -1) {
        context.report({
          rule: 'tool-result-duplicate',
          index,
          toolCallId: id,
          facts: { firstIndex: answeredAt[first] as number },
        });
        return;
      }
      answeredAt[owed] = index;
      owedOf[first] = nextSame[owed] as number;
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
    if (firstAnswer !== -1)
      context.report({ rule: 'tool-result-duplicate', index, toolCallId: id, facts: { firstIndex: firstAnswer } });
    else context.report({ rule: 'tool-result-id-mismatch', index, toolCallId: id });
  }
}

/** Above this many calls a block indexes its ids; at or below, a linear search is cheaper than a map. (A test passes another bound to compare the two ways.) */
const WIDE = 16;
