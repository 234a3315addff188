import type { Change } from '../changes.js';
import type { RepairOptions, RepairResult } from '../options.js';
import type { RuleId } from '../rule-ids.js';
import { SYNTHETIC_RESULT } from '../synthetic-result.js';
import { type NativeEntry, preview } from './core-pass.js';
import { isRecord } from './native-tag.js';
import { checkResponsesInput, isProducedItem } from './responses-check.js';
import { itemType, type ResponsesItem } from './responses-input.js';

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
  if (checkResponsesInput(input).length === 0)
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
  const messages = changes.length === 0 ? (input as unknown[]) : entries.map((entry) => entry.value);
  const remaining = checkResponsesInput(messages).map((violation) => ({
    ...violation,
    why: WHY[violation.rule] ?? 'no repair strategy covers this case',
  }));
  return { messages, changes, remaining, changed: changes.length > 0 };
}

const item = (entry: NativeEntry) => entry.value as ResponsesItem;
const callIdOf = (entry: NativeEntry) =>
  typeof item(entry)['call_id'] === 'string' ? (item(entry)['call_id'] as string) : '';

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
    if (type === 'function_call_output' && callAnswered.has(callIdOf(entry))) callAnswered.set(callIdOf(entry), true);
    if (type === 'function_call') {
      const sameCall = byId.get(`call:${callIdOf(entry)}`);
      // The same call item again before its output (an approval step replayed): one copy is enough.
      if (sameCall !== undefined && sameCall === canonicalCall(value) && callAnswered.get(callIdOf(entry)) === false) {
        changes.push({
          kind: 'item-dropped',
          index: entry.origin,
          toolCallId: callIdOf(entry),
          detail: `function_call item repeated before its output (${preview(value)}); one copy kept`,
        });
        continue;
      }
      byId.set(`call:${callIdOf(entry)}`, canonicalCall(value));
      if (!callAnswered.has(callIdOf(entry))) callAnswered.set(callIdOf(entry), false);
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
      if (type === 'message' || type === 'function_call') {
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

function canonicalCall(value: ResponsesItem): string {
  return JSON.stringify([value['call_id'], value['name'], value['arguments']]);
}

/** Outputs paired with calls by call_id, first open call first; reused call_ids renamed; outputs without a call kept as text. */
function pairByCallId(entries: NativeEntry[], options: RepairOptions, changes: Change[]): NativeEntry[] {
  const taken = new Set(entries.map(callIdOf).filter((id) => id !== ''));
  // Per call_id, its calls in order and the first still unanswered (outputs answer first open first, so `next` only moves on).
  const open = new Map<string, { calls: { id: string; answered: boolean }[]; next: number }>();
  const out: NativeEntry[] = [];
  for (const entry of entries) {
    const type = itemType(item(entry));
    const callId = callIdOf(entry);
    if (type === 'function_call' && callId === '') {
      // No call_id: nothing can answer it yet. It gets one, and (below) an error output, or is stripped.
      let id = `call_unstuck_${entry.origin}`;
      for (let attempt = 2; taken.has(id); attempt += 1) id = `call_unstuck_${entry.origin}_${attempt}`;
      taken.add(id);
      out.push({ ...entry, value: { ...item(entry), call_id: id } });
      changes.push({
        kind: 'id-generated',
        index: entry.origin,
        toolCallId: id,
        detail: `function_call had no call_id; given '${id}'`,
      });
      open.set(id, { calls: [{ id, answered: false }], next: 0 });
      continue;
    }
    if (type === 'function_call') {
      const queue = open.get(callId);
      const calls = queue?.calls ?? [];
      let id = callId;
      if (calls.length > 0) {
        for (let attempt = calls.length + 1; taken.has(id); attempt += 1) id = `${callId}_${attempt}`;
        taken.add(id);
        out.push({ ...entry, value: { ...item(entry), call_id: id } });
        changes.push({
          kind: 'id-remapped',
          index: entry.origin,
          toolCallId: id,
          detail: `call_id '${callId}' is used by an earlier call; renamed to '${id}' here and in the output that answers it`,
        });
      } else {
        out.push(entry);
      }
      if (queue === undefined) open.set(callId, { calls: [{ id, answered: false }], next: 0 });
      else calls.push({ id, answered: false });
      continue;
    }
    if (type !== 'function_call_output') {
      out.push(entry);
      continue;
    }
    const queue = open.get(callId);
    const calls = queue?.calls ?? [];
    if (queue !== undefined)
      while (queue.next < calls.length && (calls[queue.next] as { answered: boolean }).answered) queue.next += 1;
    const call = queue === undefined ? undefined : calls[queue.next];
    if (call !== undefined) {
      call.answered = true;
      if (call.id === callId) out.push(entry);
      else {
        out.push({ ...entry, value: { ...item(entry), call_id: call.id } });
        changes.push({
          kind: 'id-remapped',
          index: entry.origin,
          toolCallId: call.id,
          detail: `output's call_id '${callId}' renamed with its call's`,
        });
      }
      continue;
    }
    if (calls.length > 0) {
      changes.push({
        kind: 'result-duplicate-dropped',
        index: entry.origin,
        toolCallId: callId,
        detail: `a second output for the same call (${preview(item(entry)['output'])}); the first is kept`,
      });
      continue;
    }
    if (options.orphans === 'drop') {
      changes.push({
        kind: 'orphan-dropped',
        index: entry.origin,
        ...(callId === '' ? {} : { toolCallId: callId }),
        detail: `function_call_output ${preview(item(entry)['output'])} dropped: no function_call before it has its call_id`,
      });
      continue;
    }
    out.push({ ...entry, value: orphanAsText(item(entry)) });
    changes.push({
      kind: 'orphan-to-user',
      index: entry.origin,
      ...(callId === '' ? {} : { toolCallId: callId }),
      detail: 'function_call_output turned into a user message: no function_call before it has its call_id',
    });
  }
  return out;
}

function orphanAsText(value: ResponsesItem): ResponsesItem {
  const callId =
    typeof value['call_id'] === 'string' && value['call_id'] !== '' ? ` (call_id ${value['call_id']})` : '';
  const header = `[unstuck: the tool output below${callId} lost its function call, so it is kept as text]`;
  const output = value['output'];
  const content = Array.isArray(output)
    ? [{ type: 'input_text', text: header }, ...output]
    : typeof output === 'string' && output !== ''
      ? `${header}\n${output}`
      : output === undefined || output === ''
        ? header
        : `${header}\n${JSON.stringify(output)}`;
  return { type: 'message', role: 'user', content };
}

/** Every call answered: an error output right after its run of calls, or (policy strip) the call removed. */
function answerOrStrip(entries: NativeEntry[], options: RepairOptions, changes: Change[]): NativeEntry[] {
  const answered = new Set(entries.filter((entry) => itemType(item(entry)) === 'function_call_output').map(callIdOf));
  const out: NativeEntry[] = [];
  let pending: NativeEntry[] = [];
  const flush = () => {
    for (const call of pending) {
      out.push({
        value: { type: 'function_call_output', call_id: callIdOf(call), output: SYNTHETIC_RESULT },
        origin: call.origin,
        added: true,
      });
      changes.push({
        kind: 'result-synthesized',
        index: call.origin,
        toolCallId: callIdOf(call),
        detail: `call ${String(item(call)['name'] ?? '(no name)')} had no output; answered with an error output saying it did not complete`,
      });
    }
    pending = [];
  };
  for (const entry of entries) {
    const isCall = itemType(item(entry)) === 'function_call';
    if (!isCall) flush();
    if (isCall && !answered.has(callIdOf(entry))) {
      if (options.unanswered === 'strip') {
        changes.push({
          kind: 'call-stripped',
          index: entry.origin,
          toolCallId: callIdOf(entry),
          detail: `call ${String(item(entry)['name'] ?? '(no name)')} ${preview(item(entry)['arguments'])} never got an output; removed`,
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
