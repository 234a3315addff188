/**
 * The surface replacement that makes a session's derived request legal again, planned as data.
 *
 * The session log is append-only; the only way to change what `deriveMessages()` returns is a
 * replace surface op, and each one turns a contiguous range of nodes into ONE node. So the plan
 * never inserts: it rewrites an assistant (unanswered calls stripped with a note, its reasoning
 * and text kept; calls whose results are still adjacent restored), neutralises a result that
 * pairs with nothing into user text, and folds a run of user messages holding duplicates into
 * one. A plan for a healed surface is empty: that is what makes the retry happen only once.
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

export interface PlanOptions {
  /**
   * Also unpair calls answered by a result logged as `user/message` (what layers 1 and 2 add).
   * The harness's compaction counts only `tool/result` events against tool calls, so such a
   * pair leaves its tool-pairing balance open forever; the replacement closes it.
   */
  readonly balance?: boolean;
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
        if (!current.has(call.id) && !found.has(call.id)) found.set(call.id, call);
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

export function planHeal(session: Session, nodes: readonly SurfaceNode[], options: PlanOptions = {}): SurfaceEdit[] {
  const edits: SurfaceEdit[] = [];
  const visible = nodes.filter((node): node is SurfaceNode & { message: Message } => node.message !== null);
  let index = 0;
  while (index < visible.length) {
    const node = visible[index]!;
    const message = node.message;
    const calls = toolCallsOf(message);
    const declared = new Map(calls.map((call) => [call.id, call] as const));
    const restorable = message.role === 'assistant' ? originalCalls(session, node, new Set(declared.keys())) : new Map<string, ToolCallBlock>();

    if (message.role === 'assistant' && (declared.size > 0 || restorable.size > 0)) {
      const answered = new Set<string>();
      let next = index + 1;
      while (next < visible.length) {
        const candidate = visible[next]!;
        if (!isResultOnly(candidate.message)) break;
        if (options.balance === true && candidate.event.type === 'user/message') break;
        const ids = candidate.message.content.filter(isToolResult).map((block) => block.toolCallId);
        const fits = ids.every((id, position) => (declared.has(id) || restorable.has(id)) && !answered.has(id) && ids.indexOf(id) === position);
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
        // In balance mode the results that follow as user/message are made text just after
        // (the orphan branch below); the note says so instead of calling them unanswered.
        const asText = new Set<string>();
        for (let later = next; later < visible.length && isResultOnly(visible[later]!.message); later += 1) {
          for (const block of visible[later]!.message.content) if (isToolResult(block)) asText.add(block.toolCallId);
        }
        const unanswered = stripped.filter((call) => !asText.has(call.id));
        const unpaired = stripped.filter((call) => asText.has(call.id));
        const notes = [
          unanswered.length > 0 ? callNote(unanswered, 'unanswered') : '',
          unpaired.length > 0 ? callNote(unpaired, 'balance') : '',
        ].filter((note) => note !== '');
        if (notes.length > 0) {
          const separator = textOf(message.content).length > 0 ? '\n\n' : '';
          content.push({ type: 'text', text: separator + notes.join('\n\n') });
        }
        const parts = [
          unanswered.length > 0 ? `stripped ${unanswered.length} unanswered call(s)` : '',
          unpaired.length > 0 ? `unpaired ${unpaired.length} call(s) answered as user messages` : '',
          restored.length > 0 ? `restored ${restored.length} call(s)` : '',
        ].filter((part) => part !== '');
        edits.push({
          kind: unanswered.length > 0 ? 'strip-unanswered' : unpaired.length > 0 ? 'balance' : 'restore-calls',
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

    if (message.role === 'user') {
      let next = index;
      const run: (SurfaceNode & { message: Message })[] = [];
      while (next < visible.length && visible[next]!.message.role === 'user' && !hasResults(visible[next]!.message)) {
        run.push(visible[next]!);
        next += 1;
      }
      const keys = new Set<string>();
      const unique: Message[] = [];
      for (const entry of run) {
        const key = contentKey(entry.message);
        if (keys.has(key)) continue;
        keys.add(key);
        unique.push(entry.message);
      }
      if (unique.length < run.length) {
        const content: ContentBlock[] = [];
        unique.forEach((kept, position) => {
          if (position > 0) content.push({ type: 'text', text: '\n\n' });
          content.push(...kept.content);
        });
        const first = run[0]!;
        const last = run[run.length - 1]!;
        edits.push({
          kind: 'fold-duplicates',
          role: 'user',
          start: first.seq,
          end: last.seq,
          sources: rangeSources(nodes, first.seq, last.seq),
          content,
          base: first,
          detail: `user messages at seq ${first.seq}..${last.seq}: folded ${run.length - unique.length} duplicate(s)`,
        });
      }
      index = next;
      continue;
    }
    index += 1;
  }
  return edits;
}
