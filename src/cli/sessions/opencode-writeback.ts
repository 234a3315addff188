import type { Message, ToolCall } from '../../core/messages.js';
import { alignRepaired, isRecord, sameJson } from './align-repaired.js';
import type { ChatSource } from './opencode-history.js';
import { resultOf } from './opencode-history.js';

/** A change to one tool part, the unit OpenCode keeps a call and its result in. */
export type PartEdit =
  | { kind: 'call-id'; part: string; from: string; to: string }
  | { kind: 'output'; part: string; output: string }
  | { kind: 'delete'; part: string };

/** The part edits a repair comes to, and what in it cannot be written back to OpenCode's parts. */
export interface WritebackPlan {
  edits: PartEdit[];
  /** One line each: a change OpenCode's rows cannot hold (or that OpenCode rebuilds itself), not written. */
  unwritable: string[];
}

interface PartFate {
  call?: ToolCall | null;
  result?: Message | null;
}

/**
 * Lines the repaired chat up against the chat read (the core keeps untouched messages as the same objects) and
 * turns what changed into edits of tool parts: a call renamed together with its result is the part's `callID`;
 * a result's text changed is a completed part's `state.output`; a call dropped together with its result is the
 * part deleted. Anything else (a message added, dropped or moved, a text or user message changed, a call kept
 * whose result went, a result for a call OpenCode marks interrupted) has no place in the rows: it is listed in
 * `unwritable`, never guessed at.
 */
export function planWriteback(
  native: readonly Message[],
  sources: readonly ChatSource[],
  parts: ReadonlyMap<string, Record<string, unknown>>,
  repaired: readonly unknown[],
): WritebackPlan {
  const unwritable: string[] = [];
  const fates = new Map<string, PartFate>();
  const fate = (part: string): PartFate => {
    const found = fates.get(part);
    if (found !== undefined) return found;
    const fresh: PartFate = {};
    fates.set(part, fresh);
    return fresh;
  };
  for (const step of alignRepaired(native, repaired)) {
    if (step.kind === 'same') continue;
    if (step.kind === 'added') {
      unwritable.push(
        `a ${String(step.output['role'] ?? 'message')} message the repair ${step.from === undefined ? 'adds' : `moves from messages[${step.from}]`} before messages[${step.before}]: OpenCode's rows have no place for it`,
      );
      continue;
    }
    const source = sources[step.input] as ChatSource;
    const input = native[step.input] as Message;
    if (step.kind === 'dropped') {
      if (input.role === 'tool' && source.resultPart !== undefined) fate(source.resultPart).result = null;
      else if (input.role === 'assistant' && onlyCalls(input))
        for (const part of source.callParts) fate(part).call = null;
      else unwritable.push(`messages[${step.input}] (${input.role}) dropped: not a tool part, not written`);
      continue;
    }
    const output = step.output as Message;
    if (input.role === 'tool' && source.resultPart !== undefined) {
      const { content: _a, tool_call_id: _b, ...restIn } = input;
      const { content: _c, tool_call_id: _d, ...restOut } = output;
      if (output.role !== 'tool' || !sameJson(restIn, restOut)) {
        unwritable.push(`messages[${step.input}] (tool) changed beyond its id and text: not written`);
        continue;
      }
      fate(source.resultPart).result = output;
      continue;
    }
    if (input.role === 'assistant') {
      const { tool_calls: inCalls, ...restIn } = input;
      const { tool_calls: outCalls, ...restOut } = output;
      if (!sameJson(restIn, restOut)) {
        unwritable.push(`messages[${step.input}] (assistant): its text or fields changed: not written`);
        continue;
      }
      matchCalls(inCalls ?? [], outCalls ?? []).forEach((call, index) => {
        const part = source.callParts[index];
        if (part !== undefined) fate(part).call = call;
      });
      continue;
    }
    unwritable.push(`messages[${step.input}] (${input.role}) changed: not a tool part, not written`);
  }

  const edits: PartEdit[] = [];
  for (const [id, { call, result }] of fates) {
    const part = parts.get(id);
    if (part === undefined) continue;
    const callId = part['callID'] as string;
    if (call === null || result === null) {
      if (call === null && result === null) edits.push({ kind: 'delete', part: id });
      else
        unwritable.push(`tool part ${id}: the repair drops its ${call === null ? 'call' : 'result'} only: not written`);
      continue;
    }
    const newCallId = call?.id ?? callId;
    const newResultId = result?.tool_call_id ?? callId;
    if (newCallId !== newResultId) {
      unwritable.push(`tool part ${id}: the repair gives its call and its result different ids: not written`);
      continue;
    }
    if (newCallId !== callId) edits.push({ kind: 'call-id', part: id, from: callId, to: newCallId });
    if (result !== undefined && result.content !== resultOf(part)) {
      const state = isRecord(part['state']) ? part['state'] : {};
      if (state['status'] === 'completed' && typeof result.content === 'string')
        edits.push({ kind: 'output', part: id, output: result.content });
      else
        unwritable.push(
          `tool part ${id}: its result text is rebuilt by OpenCode (status ${String(state['status'])}): not written`,
        );
    }
  }
  return { edits, unwritable };
}

/** Each input call's counterpart in the output (same object, else same name and arguments, in order), or null. */
function matchCalls(input: readonly ToolCall[], output: readonly ToolCall[]): (ToolCall | null)[] {
  const taken = new Set<number>();
  return input.map((call) => {
    let at = output.indexOf(call);
    if (at === -1 || taken.has(at))
      at = output.findIndex(
        (candidate, index) =>
          !taken.has(index) &&
          candidate.function?.name === call.function?.name &&
          candidate.function?.arguments === call.function?.arguments,
      );
    if (at === -1) return null;
    taken.add(at);
    return output[at] as ToolCall;
  });
}

function onlyCalls(message: Message): boolean {
  return typeof message.content !== 'string' || message.content === '';
}

/** The part's data with an edit applied (the row's `data` keeps every other field as it was). */
export function applyEdit(data: Record<string, unknown>, edit: PartEdit): Record<string, unknown> {
  if (edit.kind === 'call-id') return { ...data, callID: edit.to };
  if (edit.kind === 'output')
    return { ...data, state: { ...(data['state'] as Record<string, unknown>), output: edit.output } };
  return data;
}

export function describeEdit(edit: PartEdit): string {
  if (edit.kind === 'call-id')
    return `tool part ${edit.part}: callID '${edit.from}' -> '${edit.to}' (the call and its result)`;
  if (edit.kind === 'output') return `tool part ${edit.part}: its output replaced`;
  return `tool part ${edit.part}: deleted (its call and its result)`;
}
