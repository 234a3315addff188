/**
 * The replacement that closes compaction's tool-pairing balance after a crash recovery, planned
 * as data, for the `agent/pre-step` handler. The harness's compaction (`@deepseek-ai/dsh-compaction`
 * `tool-pairing.ts`) counts +1 per tool-call block of an assistant node and -1 per `tool/result`
 * node; a result logged as `user/message` (all that waking the agent after a crash and putting
 * open calls' results first in the step can append) never counts, so the balance stays open and
 * compaction can cut nothing after it. For each assistant whose calls are answered, adjacently,
 * by such results: those calls become a note in the assistant's text (reasoning and text kept)
 * and those results become user text. Nothing else is touched: unanswered calls, orphans and
 * duplicates are `planHeal`'s, on a pairing 400.
 */

import { callNote, neutralised, textOf } from './edit-text.js';
import { type ContentBlock, isResultOnly, isToolResult, type Message, toolCallsOf } from './host.js';
import type { SurfaceNode } from './surface.js';
import type { SurfaceEdit } from './surface-edit.js';

export function planBalance(nodes: readonly SurfaceNode[]): SurfaceEdit[] {
  const edits: SurfaceEdit[] = [];
  const visible = nodes.filter((node): node is SurfaceNode & { message: Message } => node.message !== null);
  let index = 0;
  while (index < visible.length) {
    const node = visible[index]!;
    const calls = toolCallsOf(node.message);
    if (calls.length === 0) {
      index += 1;
      continue;
    }
    const declared = new Map(calls.map((call) => [call.id as string, call] as const));
    const answered = new Set<string>();
    const answers = (candidate: SurfaceNode & { message: Message }, type: string): boolean => {
      if (candidate.event.type !== type || !isResultOnly(candidate.message)) return false;
      const ids = candidate.message.content.filter(isToolResult).map((block) => block.toolCallId as string);
      return ids.every(
        (id, position) => id !== '' && declared.has(id) && !answered.has(id) && ids.indexOf(id) === position,
      );
    };
    const take = (candidate: SurfaceNode & { message: Message }): void => {
      for (const block of candidate.message.content) if (isToolResult(block)) answered.add(block.toolCallId);
    };
    let next = index + 1;
    while (next < visible.length && answers(visible[next]!, 'tool/result')) take(visible[next++]!);
    // From the first result logged as user/message on, every result of this assistant becomes
    // text (a tool/result after a text node would no longer be adjacent to its call).
    const asText: (SurfaceNode & { message: Message })[] = [];
    const unpaired = new Set<string>();
    if (next < visible.length && answers(visible[next]!, 'user/message')) {
      while (
        next < visible.length &&
        (answers(visible[next]!, 'user/message') || answers(visible[next]!, 'tool/result'))
      ) {
        const candidate = visible[next++]!;
        for (const block of candidate.message.content) if (isToolResult(block)) unpaired.add(block.toolCallId);
        take(candidate);
        asText.push(candidate);
      }
    }
    if (asText.length > 0) {
      const message = node.message;
      const moved = calls.filter((call) => unpaired.has(call.id));
      const content: ContentBlock[] = message.content.filter(
        (block) => block.type !== 'tool-call' || !unpaired.has(block.id),
      );
      const separator = textOf(message.content).length > 0 ? '\n\n' : '';
      content.push({ type: 'text', text: separator + callNote(moved, 'balance') });
      edits.push({
        kind: 'balance',
        role: 'assistant',
        start: node.seq,
        end: node.seq,
        sources: [node.seq],
        content,
        base: node,
        detail: `assistant at seq ${node.seq}: ${moved.length} call(s) answered by user messages kept as text`,
      });
      for (const result of asText) {
        edits.push({
          kind: 'balance',
          role: 'user',
          start: result.seq,
          end: result.seq,
          sources: [result.seq],
          content: neutralised(result.message),
          base: result,
          detail: `result at seq ${result.seq} (after one logged as a user message): made user text`,
        });
      }
    }
    index = next;
  }
  return edits;
}
