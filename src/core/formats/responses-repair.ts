import type { Change } from '../changes.js';
import type { RepairOptions, RepairResult } from '../options.js';
import type { RuleId } from '../rule-ids.js';
import { type NativeEntry, preview } from './core-pass.js';
import { isRecord } from './native-tag.js';
import {
  type CallRef,
  callInput,
  callName,
  callPayload,
  callRef,
  keyOf,
  outputContent,
  outputRef,
  syntheticOutput,
} from './responses-calls.js';
import { checkResponsesInput, isProducedItem } from './responses-check.js';
import { itemType, type ResponsesItem } from './responses-input.js';
import { fixResponsesRequest } from './responses-request-rules.js';

const WHY: Partial<Record<RuleId, string>> = {
  'tool-call-id-duplicate': 'two different items share an id that repair cannot drop without losing one of them',
};

/**
 * Responses input repaired on its own form. The core's chat repair pairs a call with the results
 * right after it; Responses pairs by call_id anywhere later, so running the core here would move
 * items the API accepts where they are. The policies are the core's: an exact duplicate of a
 * function_call item (a rehydrated HITL history) dropped, a reused call_id renamed in the call and
 * the output that answers it, an output whose call is gone kept as user text (or dropped), a call
 * never answered given an error output right after its run of calls (or stripped), and a reasoning
 * item without the item it produced dropped (its encrypted content cannot be replayed alone).
 */
export function repairResponsesInput(input: readonly unknown[], options: RepairOptions = {}): RepairResult<unknown> {
  if (checkResponsesInput(input, options).length === 0)
    return { messages: input as unknown[], changes: [], remaining: [], changed: false };
  const changes: Change[] = [];
  let entries: NativeEntry[] = [];
  input.forEach((value, origin) => {
    if (!isRecord(value) || itemType(value) === '')
      changes.push({ kind: 'malformed-dropped', index: origin, detail: `not an input item: ${preview(value)}` });
    else entries.push({ value, origin });
  });
  entries = dropDuplicates(entries, changes);
  entries = pairByCallId(entries, options, changes);
  entries = answerOrStrip(entries, options, changes);
  entries = dropDanglingReasoning(entries, changes);
  entries = fixResponsesRequest(entries, options, changes);
  const messages = changes.length === 0 ? (input as unknown[]) : entries.map((entry) => entry.value);
  const remaining = checkResponsesInput(messages, options).map((violation) => ({
    ...violation,
    why: WHY[violation.rule] ?? 'no repair strategy covers this case',
  }));
  return { messages, changes, remaining, changed: changes.length > 0 };
}

const item = (entry: NativeEntry) => entry.value as ResponsesItem;

/**
 * Items whose `id` may be left out on input: optional in the API reference for messages and the
 * function, custom and tool-search calls; for a local_shell_call the reference marks it required, but
 * Codex sends its local_shell_call items without one (codex-rs `ResponseItem::LocalShellCall { id:
 * Option<..> }`, skipped when none) and the API takes them.
 */
const OPTIONAL_ID = new Set(['message', 'function_call', 'custom_tool_call', 'tool_search_call', 'local_shell_call']);

/** An item repeated with the same id: the exact copy goes; a different item keeps its content and loses the clashing id. */
function dropDuplicates(entries: NativeEntry[], changes: Change[]): NativeEntry[] {
  const byId = new Map<string, string>();
  const callAnswered = new Map<string, boolean>();
  const out: NativeEntry[] = [];
  for (const entry of entries) {
    const value = item(entry);
    const type = itemType(value);
    const id = typeof value['id'] === 'string' && value['id'] !== '' ? value['id'] : undefined;
    const text = JSON.stringify(value);
    const answers = outputRef(value);
    if (answers !== undefined && callAnswered.has(keyOf(answers))) callAnswered.set(keyOf(answers), true);
    const call = callRef(value);
    if (call !== undefined) {
      const key = keyOf(call);
      const sameCall = byId.get(`call:${key}`);
      // The same call item again before its output (an approval step replayed): one copy is enough.
      if (sameCall !== undefined && sameCall === callPayload(value) && callAnswered.get(key) === false) {
        changes.push({
          kind: 'item-dropped',
          index: entry.origin,
          toolCallId: call.callId,
          detail: `${type} item repeated before its output (${preview(value)}); one copy kept`,
        });
        continue;
      }
      byId.set(`call:${key}`, callPayload(value));
      if (!callAnswered.has(key)) callAnswered.set(key, false);
    }
    if (id !== undefined && byId.has(`id:${id}`)) {
      if (byId.get(`id:${id}`) === text) {
        changes.push({
          kind: 'item-dropped',
          index: entry.origin,
          toolCallId: id,
          detail: `exact duplicate of an earlier item with id ${id}`,
        });
        continue;
      }
      if (OPTIONAL_ID.has(type)) {
        const { id: _id, ...rest } = value;
        out.push({ ...entry, value: rest });
        changes.push({
          kind: 'field-removed',
          index: entry.origin,
          toolCallId: id,
          detail: `item id ${id} is used by an earlier item; the id was removed (it is optional on input)`,
        });
        continue;
      }
    }
    if (id !== undefined) byId.set(`id:${id}`, text);
    out.push(entry);
  }
  return out;
}

interface OpenCall {
  id: string;
  answered: boolean;
}

/**
 * Outputs paired with calls by call_id (within their family), first open call first; reused
 * call_ids renamed; an output that came before its only call moved after that call's run; outputs
 * without a call, and approval responses without their request, kept as text.
 */
function pairByCallId(entries: NativeEntry[], options: RepairOptions, changes: Change[]): NativeEntry[] {
  const taken = new Set(entries.map((entry) => callRef(item(entry))?.callId ?? '').filter((id) => id !== ''));
  // Where each call key is first called, and the keys whose call gets an output after it.
  const firstCall = new Map<string, number>();
  const answeredAfter = new Set<string>();
  entries.forEach((entry, position) => {
    const call = callRef(item(entry));
    if (call !== undefined && call.callId !== '' && !firstCall.has(keyOf(call))) firstCall.set(keyOf(call), position);
    const output = outputRef(item(entry));
    if (output !== undefined && firstCall.has(keyOf(output))) answeredAfter.add(keyOf(output));
  });
  // Per key, its calls in order and the first still unanswered (outputs answer first open first, so `next` only moves on).
  const open = new Map<string, { calls: OpenCall[]; next: number }>();
  const waiting = new Map<string, NativeEntry[]>();
  let released: NativeEntry[] = [];
  const approvals = new Set<string>();
  const approved = new Set<string>();
  const out: NativeEntry[] = [];

  const placeOutput = (entry: NativeEntry, ref: CallRef, position: number) => {
    const callId = ref.callId;
    const key = keyOf(ref);
    const queue = open.get(key);
    const calls = queue?.calls ?? [];
    if (queue !== undefined)
      while (queue.next < calls.length && (calls[queue.next] as OpenCall).answered) queue.next += 1;
    const call = queue === undefined ? undefined : calls[queue.next];
    if (call !== undefined) {
      call.answered = true;
      if (call.id === callId) out.push(entry);
      else {
        out.push({ ...entry, value: { ...item(entry), [ref.field]: call.id } });
        changes.push({
          kind: 'id-remapped',
          index: entry.origin,
          toolCallId: call.id,
          detail: `output's call_id '${callId}' renamed with its call's`,
        });
      }
      return;
    }
    if (calls.length > 0) {
      changes.push({
        kind: 'result-duplicate-dropped',
        index: entry.origin,
        toolCallId: callId,
        detail: `a second output for the same call (${preview(outputContent(item(entry)))}); the first is kept`,
      });
      return;
    }
    const at = firstCall.get(key);
    if (callId !== '' && at !== undefined && at > position && !answeredAfter.has(key)) {
      // Its call comes later and gets no other output: the output goes right after that call's run.
      const held = waiting.get(key) ?? [];
      held.push(entry);
      waiting.set(key, held);
      return;
    }
    orphan(
      entry,
      callId,
      `${itemType(item(entry))} ${preview(outputContent(item(entry)))}`,
      'no call before it has its call_id',
    );
  };

  const orphan = (entry: NativeEntry, callId: string, what: string, why: string) => {
    if (options.orphans === 'drop') {
      changes.push({
        kind: 'orphan-dropped',
        index: entry.origin,
        ...(callId === '' ? {} : { toolCallId: callId }),
        detail: `${what} dropped: ${why}`,
      });
      return;
    }
    out.push({ ...entry, value: orphanAsText(item(entry)) });
    changes.push({
      kind: 'orphan-to-user',
      index: entry.origin,
      ...(callId === '' ? {} : { toolCallId: callId }),
      detail: `${itemType(item(entry))} turned into a user message: ${why}`,
    });
  };

  const release = () => {
    const now = released;
    released = [];
    for (const entry of now) {
      changes.push({
        kind: 'message-moved',
        index: entry.origin,
        ...(outputRef(item(entry))?.callId ? { toolCallId: outputRef(item(entry))?.callId as string } : {}),
        detail: 'output moved after its call: it came before it, where the API pairs an output with no call',
      });
      placeOutput(entry, outputRef(item(entry)) as CallRef, Number.POSITIVE_INFINITY);
    }
  };

  for (let position = 0; position < entries.length; position += 1) {
    const entry = entries[position] as NativeEntry;
    const value = item(entry);
    const type = itemType(value);
    const call = callRef(value);
    if (call === undefined) release();
    if (call !== undefined && call.callId === '') {
      // No call_id: nothing can answer it yet. It gets one, and (below) an error output, or is stripped.
      let id = `call_unstuck_${entry.origin}`;
      for (let attempt = 2; taken.has(id); attempt += 1) id = `call_unstuck_${entry.origin}_${attempt}`;
      taken.add(id);
      out.push({ ...entry, value: { ...value, call_id: id } });
      changes.push({
        kind: 'id-generated',
        index: entry.origin,
        toolCallId: id,
        detail: `${type} had no call_id; given '${id}'`,
      });
      open.set(keyOf({ ...call, callId: id }), { calls: [{ id, answered: false }], next: 0 });
      continue;
    }
    if (call !== undefined) {
      const key = keyOf(call);
      const callId = call.callId;
      const queue = open.get(key);
      const calls = queue?.calls ?? [];
      let id = callId;
      if (calls.length > 0) {
        for (let attempt = calls.length + 1; taken.has(id); attempt += 1) id = `${callId}_${attempt}`;
        taken.add(id);
        out.push({ ...entry, value: { ...value, call_id: id } });
        changes.push({
          kind: 'id-remapped',
          index: entry.origin,
          toolCallId: id,
          detail: `call_id '${callId}' is used by an earlier call; renamed to '${id}' here and in the output that answers it`,
        });
      } else {
        out.push(entry);
      }
      if (queue === undefined) open.set(key, { calls: [{ id, answered: false }], next: 0 });
      else calls.push({ id, answered: false });
      const held = waiting.get(key);
      if (held !== undefined) {
        waiting.delete(key);
        released.push(...held);
      }
      continue;
    }
    const output = outputRef(value);
    if (output !== undefined) {
      placeOutput(entry, output, position);
      continue;
    }
    if (type === 'mcp_approval_request' && typeof value['id'] === 'string') approvals.add(value['id']);
    if (type === 'mcp_approval_response') {
      const request = typeof value['approval_request_id'] === 'string' ? value['approval_request_id'] : '';
      if (!approvals.has(request)) {
        orphan(
          entry,
          request,
          `mcp_approval_response ${preview(value)}`,
          `no mcp_approval_request before it has id '${request}'`,
        );
        continue;
      }
      if (approved.has(request)) {
        changes.push({
          kind: 'result-duplicate-dropped',
          index: entry.origin,
          toolCallId: request,
          detail: `a second approval response for the same request (${preview(value)}); the first is kept`,
        });
        continue;
      }
      approved.add(request);
    }
    out.push(entry);
  }
  release();
  return out;
}

function orphanAsText(value: ResponsesItem): ResponsesItem {
  const type = itemType(value);
  if (type === 'mcp_approval_response') {
    const { type: _type, ...rest } = value;
    const header = `[unstuck: the MCP approval response below lost its approval request, so it is kept as text] ${JSON.stringify(rest)}`;
    return { type: 'message', role: 'user', content: header };
  }
  const ref = outputRef(value);
  const callId = ref !== undefined && ref.callId !== '' ? ` (call_id ${ref.callId})` : '';
  const what = type === 'function_call_output' ? 'tool output' : type === '' ? 'output' : type;
  const header = `[unstuck: the ${what} below${callId} lost its ${type === 'function_call_output' ? 'function ' : ''}call, so it is kept as text]`;
  const output = outputContent(value);
  const content =
    Array.isArray(output) && type !== 'tool_search_output'
      ? [{ type: 'input_text', text: header }, ...output]
      : typeof output === 'string' && output !== ''
        ? `${header}\n${output}`
        : output === undefined || output === ''
          ? header
          : `${header}\n${JSON.stringify(output)}`;
  return { type: 'message', role: 'user', content };
}

/** Every call answered: an output of its family right after its run of calls, or (policy strip) the call removed. */
function answerOrStrip(entries: NativeEntry[], options: RepairOptions, changes: Change[]): NativeEntry[] {
  const answered = new Set<string>();
  for (const entry of entries) {
    const output = outputRef(item(entry));
    if (output !== undefined) answered.add(keyOf(output));
  }
  const out: NativeEntry[] = [];
  let pending: NativeEntry[] = [];
  const flush = () => {
    for (const call of pending) {
      const callId = callRef(item(call))?.callId ?? '';
      out.push({ value: syntheticOutput(item(call), callId), origin: call.origin, added: true });
      changes.push({
        kind: 'result-synthesized',
        index: call.origin,
        toolCallId: callId,
        detail: `${itemType(item(call))} ${callName(item(call))} had no output; answered with ${itemType(item(call)) === 'tool_search_call' ? 'an empty tool list' : 'an error output saying it did not complete'}`,
      });
    }
    pending = [];
  };
  for (const entry of entries) {
    const call = callRef(item(entry));
    if (call === undefined) flush();
    if (call !== undefined && !answered.has(keyOf(call))) {
      if (options.unanswered === 'strip') {
        changes.push({
          kind: 'call-stripped',
          index: entry.origin,
          toolCallId: call.callId,
          detail: `${itemType(item(entry))} ${callName(item(entry))} ${preview(callInput(item(entry)))} never got an output; removed`,
        });
        continue;
      }
      pending.push(entry);
    }
    out.push(entry);
  }
  flush();
  return out;
}
function dropDanglingReasoning(entries: NativeEntry[], changes: Change[]): NativeEntry[] {
  let current = entries;
  for (;;) {
    const next = current.filter((entry, position) => {
      if (itemType(item(entry)) !== 'reasoning' || isProducedItem(current[position + 1]?.value)) return true;
      changes.push({
        kind: 'item-dropped',
        index: entry.origin,
        detail: `reasoning item ${String(item(entry)['id'] ?? '')} is not followed by the item it produced; its encrypted reasoning cannot be replayed alone`,
      });
      return false;
    });
    if (next.length === current.length) return next;
    current = next;
  }
}
