/**
 * The surface replacement that makes a session's derived request legal again, planned as data,
 * for the `agent/request-error` handler that heals on a pairing 400 and retries.
 *
 * Each replace op turns a contiguous range of nodes into ONE node, so the plan never inserts: it
 * rewrites an assistant (unanswered calls stripped with a note, its reasoning and text kept;
 * calls whose results are still adjacent restored), neutralises a result that pairs with nothing
 * into user text, and folds a user message repeated back to back into one. A plan for a healed
 * surface is empty: that is what makes the retry happen only once.
 */

import { callNote, neutralised, textOf } from './edit-text.js';
import type { Session } from './host.js';
import {
  type ContentBlock,
  hasResults,
  isResultOnly,
  isToolResult,
  type Message,
  type SessionEvent,
  type ToolCallBlock,
  toolCallsOf,
} from './host.js';
import type { SurfaceNode } from './surface.js';
import { eventAt } from './surface.js';
import type { SurfaceEdit } from './surface-edit.js';

/** Tool calls of the assistant events an assistant replacement was made from (its "original"). */
function originalCalls(session: Session, node: SurfaceNode, current: ReadonlySet<string>): Map<string, ToolCallBlock> {
  const found = new Map<string, ToolCallBlock>();
  const seen = new Set<number>();
  const visit = (event: SessionEvent): void => {
    const marker = event as { surfaceOp?: unknown; sourceEventSeqs?: readonly number[] };
    if (typeof marker.surfaceOp !== 'object' || marker.surfaceOp === null) return;
    for (const seq of marker.sourceEventSeqs ?? []) {
      if (seen.has(seq)) continue;
      seen.add(seq);
      const source = eventAt(session, seq);
      if (source?.type !== 'assistant/message') continue;
      for (const call of toolCallsOf(source.data.message)) {
        if (call.id !== '' && !current.has(call.id) && !found.has(call.id)) found.set(call.id, call);
      }
      visit(source);
    }
  };
  visit(node.event);
  return found;
}

function rangeSources(nodes: readonly SurfaceNode[], start: number, end: number): number[] {
  const sources: number[] = [];
  let inside = false;
  for (const node of nodes) {
    if (node.seq === start) inside = true;
    if (inside) sources.push(node.seq);
    if (node.seq === end) break;
  }
  return sources;
}

function contentKey(message: Message): string {
  return JSON.stringify(message.content);
}

export function planHeal(session: Session, nodes: readonly SurfaceNode[]): SurfaceEdit[] {
  const edits: SurfaceEdit[] = [];
  const visible = nodes.filter((node): node is SurfaceNode & { message: Message } => node.message !== null);
  let index = 0;
  while (index < visible.length) {
    const node = visible[index]!;
    const message = node.message;
    const calls = toolCallsOf(message);
    // A call whose id is empty (logged from an old DeepSeek stream, before the stream guard gave
    // such calls stable ids) cannot be answered legally by any result: it is stripped, and its
    // empty-id result made text.
    const declared = new Map(calls.filter((call) => call.id !== '').map((call) => [call.id, call] as const));
    const restorable =
      message.role === 'assistant'
        ? originalCalls(session, node, new Set(declared.keys()))
        : new Map<string, ToolCallBlock>();

    if (message.role === 'assistant' && (calls.length > 0 || restorable.size > 0)) {
      const answered = new Set<string>();
      let next = index + 1;
      while (next < visible.length) {
        const candidate = visible[next]!;
        if (!isResultOnly(candidate.message)) break;
        const ids = candidate.message.content.filter(isToolResult).map((block) => block.toolCallId);
        const fits = ids.every(
          (id, position) =>
            id !== '' && (declared.has(id) || restorable.has(id)) && !answered.has(id) && ids.indexOf(id) === position,
        );
        if (!fits) break;
        for (const id of ids) answered.add(id);
        next += 1;
      }
      const stripped = calls.filter((call) => !answered.has(call.id));
      const restored = [...restorable.values()].filter((call) => answered.has(call.id));
      if (stripped.length > 0 || restored.length > 0) {
        const strippedIds = new Set(stripped.map((call) => call.id));
        const content: ContentBlock[] = message.content.filter(
          (block) => block.type !== 'tool-call' || !strippedIds.has(block.id),
        );
        content.push(...restored);
        if (stripped.length > 0) {
          const separator = textOf(message.content).length > 0 ? '\n\n' : '';
          content.push({ type: 'text', text: separator + callNote(stripped, 'unanswered') });
        }
        const parts = [
          stripped.length > 0 ? `stripped ${stripped.length} unanswered call(s)` : '',
          restored.length > 0 ? `restored ${restored.length} call(s)` : '',
        ].filter((part) => part !== '');
        edits.push({
          kind: stripped.length > 0 ? 'strip-unanswered' : 'restore-calls',
          role: 'assistant',
          start: node.seq,
          end: node.seq,
          sources: [node.seq],
          content,
          base: node,
          detail: `assistant at seq ${node.seq}: ${parts.join(', ')}`,
        });
      }
      index = next;
      continue;
    }

    if (hasResults(message)) {
      edits.push({
        kind: 'neutralise-orphan',
        role: 'user',
        start: node.seq,
        end: node.seq,
        sources: [node.seq],
        content: neutralised(message),
        base: node,
        detail: `result at seq ${node.seq} pairs with no adjacent call: made user text`,
      });
      index += 1;
      continue;
    }

    if (message.role === 'user' && !hasResults(message)) {
      // Crash retries leave the same prompt logged once per failed turn, back to back.
      let next = index + 1;
      const key = contentKey(message);
      while (
        next < visible.length &&
        visible[next]!.message.role === 'user' &&
        !hasResults(visible[next]!.message) &&
        contentKey(visible[next]!.message) === key
      )
        next += 1;
      if (next - index > 1) {
        const last = visible[next - 1]!;
        edits.push({
          kind: 'fold-duplicates',
          role: 'user',
          start: node.seq,
          end: last.seq,
          sources: rangeSources(nodes, node.seq, last.seq),
          content: [...message.content],
          base: node,
          detail: `user messages at seq ${node.seq}..${last.seq}: folded ${next - index - 1} repeat(s)`,
        });
      }
      index = next;
      continue;
    }
    index += 1;
  }
  return edits;
}
