/**
 * The surface replacement that makes a session's derived request legal again, planned as data.
 *
 * The session log is append-only; the only way to change what `deriveMessages()` returns is a
 * replace surface op, and each one turns a contiguous range of nodes into ONE node. So the plan
 * never inserts: it rewrites an assistant (unanswered calls stripped with a note, its reasoning
 * and text kept; calls whose results are still adjacent restored), neutralises a result that
 * pairs with nothing into user text, and folds a user message repeated back to back into one.
 * A plan for a healed surface is empty: that is what makes the retry happen only once.
 */
import { isResultOnly, isToolResult, hasResults, toolCallsOf, type ContentBlock, type Message, type SessionEvent, type ToolCallBlock } from './host.js';
import type { SurfaceNode } from './surface.js';
import { eventAt } from './surface.js';
import type { Session } from './host.js';

export type EditKind = 'strip-unanswered' | 'restore-calls' | 'neutralise-orphan' | 'fold-duplicates' | 'balance';

export interface SurfaceEdit {
  readonly kind: EditKind;
  readonly role: 'assistant' | 'user';
  /** First and last surface node (event seq) the new node replaces. */
  readonly start: number;
  readonly end: number;
  /** Every shadowed node, as the session requires of a replacement. */
  readonly sources: number[];
  readonly content: ContentBlock[];
  /** The node whose turn/step (assistant) or source (user) the replacement keeps. */
  readonly base: SurfaceNode;
  /** What was done, without message contents (safe to log). */
  readonly detail: string;
}

const ARGUMENTS_SHOWN = 400;

function clip(text: string): string {
  return text.length <= ARGUMENTS_SHOWN ? text : `${text.slice(0, ARGUMENTS_SHOWN)}…`;
}

function textOf(blocks: readonly ContentBlock[]): string {
  let text = '';
  for (const block of blocks) if (block.type === 'text') text += block.text;
  return text;
}

function callNote(calls: readonly ToolCallBlock[], why: 'unanswered' | 'balance'): string {
  const lines = calls.map((call) => `- ${call.name || '(unnamed tool)'} (id ${call.id || '(empty)'}) with arguments ${clip(call.arguments)}`);
  const tail = why === 'unanswered'
    ? 'These tool calls never completed (the tool dispatch failed before producing a result), so they were taken out of the request.'
    : 'These tool calls are kept here as text; their results follow as text.';
  return `[unstuck] ${tail}\n${lines.join('\n')}`;
}

function neutralised(message: Message): ContentBlock[] {
  const content: ContentBlock[] = [];
  for (const block of message.content) {
    if (isToolResult(block)) {
      const status = block.isError === true ? 'error result' : 'result';
      content.push({ type: 'text', text: `[unstuck] Tool ${status} for call ${block.toolCallId || '(empty id)'}:\n${textOf(block.content) || '(no output)'}` });
    } else {
      content.push(block);
    }
  }
  return content;
}

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
    // A call whose id is empty (an old DeepSeek stream, before layer 4 gave ids) cannot be
    // answered legally by any result: it is stripped, and its empty-id result made text.
    const declared = new Map(calls.filter((call) => call.id !== '').map((call) => [call.id, call] as const));
    const restorable = message.role === 'assistant' ? originalCalls(session, node, new Set(declared.keys())) : new Map<string, ToolCallBlock>();

    if (message.role === 'assistant' && (calls.length > 0 || restorable.size > 0)) {
      const answered = new Set<string>();
      let next = index + 1;
      while (next < visible.length) {
        const candidate = visible[next]!;
        if (!isResultOnly(candidate.message)) break;
        const ids = candidate.message.content.filter(isToolResult).map((block) => block.toolCallId);
        const fits = ids.every((id, position) => id !== '' && (declared.has(id) || restorable.has(id)) && !answered.has(id) && ids.indexOf(id) === position);
        if (!fits) break;
        for (const id of ids) answered.add(id);
        next += 1;
      }
      const stripped = calls.filter((call) => !answered.has(call.id));
      const restored = [...restorable.values()].filter((call) => answered.has(call.id));
      if (stripped.length > 0 || restored.length > 0) {
        const strippedIds = new Set(stripped.map((call) => call.id));
        const content: ContentBlock[] = message.content.filter((block) => block.type !== 'tool-call' || !strippedIds.has(block.id));
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
      while (next < visible.length && visible[next]!.message.role === 'user' && !hasResults(visible[next]!.message) && contentKey(visible[next]!.message) === key) next += 1;
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

/**
 * The replacement that closes compaction's tool-pairing balance after layers 1–2. The harness's
 * compaction (`@deepseek-ai/dsh-compaction` `tool-pairing.ts`) counts +1 per tool-call block of an
 * assistant node and -1 per `tool/result` node; a result logged as `user/message` (all layers 1
 * and 2 can append) never counts, so the balance stays open and compaction can cut nothing
 * after it. For each assistant whose calls are answered, adjacently, by such results: those calls
 * become a note in the assistant's text (reasoning and text kept) and those results become user
 * text. Nothing else is touched: unanswered calls, orphans and duplicates are layer 3's.
 */
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
      return ids.every((id, position) => id !== '' && declared.has(id) && !answered.has(id) && ids.indexOf(id) === position);
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
      while (next < visible.length && (answers(visible[next]!, 'user/message') || answers(visible[next]!, 'tool/result'))) {
        const candidate = visible[next++]!;
        for (const block of candidate.message.content) if (isToolResult(block)) unpaired.add(block.toolCallId);
        take(candidate);
        asText.push(candidate);
      }
    }
    if (asText.length > 0) {
      const message = node.message;
      const moved = calls.filter((call) => unpaired.has(call.id));
      const content: ContentBlock[] = message.content.filter((block) => block.type !== 'tool-call' || !unpaired.has(block.id));
      const separator = textOf(message.content).length > 0 ? '\n\n' : '';
      content.push({ type: 'text', text: separator + callNote(moved, 'balance') });
      edits.push({
        kind: 'balance', role: 'assistant', start: node.seq, end: node.seq, sources: [node.seq], content, base: node,
        detail: `assistant at seq ${node.seq}: ${moved.length} call(s) answered by user messages kept as text`,
      });
      for (const result of asText) {
        edits.push({
          kind: 'balance', role: 'user', start: result.seq, end: result.seq, sources: [result.seq], content: neutralised(result.message), base: result,
          detail: `result at seq ${result.seq} (after one logged as a user message): made user text`,
        });
      }
    }
    index = next;
  }
  return edits;
}
