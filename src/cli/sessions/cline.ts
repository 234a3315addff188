import { UnstuckError } from '../../core/errors.js';
import type { SessionProblem } from '../../session/index.js';
import type { AgentReader, AgentSession } from './agent-session.js';
import { alignRepaired, isRecord, sameJson } from './align-repaired.js';

/**
 * Cline's and Roo Code's `api_conversation_history.json` (in `globalStorage/<extension>/tasks/<task id>/`): a JSON
 * array of Anthropic `MessageParam`s with the extension's own fields beside `role` and `content` (Cline
 * `ClineStorageMessage`: id, modelInfo, metrics, ts; Roo `ApiMessage`: ts, isSummary, condenseId/condenseParent,
 * truncationId/truncationParent, and `type: "reasoning"` items). What is sent is Roo's `getEffectiveApiHistory`
 * (src/core/condense/index.ts): from the last summary on, less the messages a truncation marker hides, less items
 * with no role; for Cline, every message. Only `role` and `content` are checked; a repaired element keeps its other
 * fields. A Cline file (its messages carry Cline's `modelInfo`) is read as Cline mends it on every request
 * (`ContextManager.ensureToolResultsFollowToolUse`, see `clineMend`): a resume appends a user message after the
 * last assistant one, so its calls are answered too, by a user message of the mend's results that `native` ends
 * with and the file does not hold (no source; `write` leaves it out, Cline makes it again). See
 * docs/decisions/agent-session-files.md.
 */
export const clineReader: AgentReader = {
  agent: 'cline',
  label: 'Cline / Roo Code',
  evidence: 'named api_conversation_history.json, a JSON array',
  detect(file, text) {
    if (!/(^|[\\/])api_conversation_history\.json$/.test(file)) return false;
    return text.trimStart().startsWith('[');
  },
  read: readClineHistory,
};

function readClineHistory(file: string, text: string): AgentSession {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UnstuckError('INPUT_INVALID', `not valid JSON: ${(error as Error).message}`, { file, cause: error });
  }
  if (!Array.isArray(value))
    throw new UnstuckError('INPUT_INVALID', 'api_conversation_history.json is not a JSON array', {
      file,
      position: '1:1',
    });
  const elements: unknown[] = value;
  const lastSummary = elements.findLastIndex((element) => isRecord(element) && element['isSummary'] === true);
  const markers = new Set(
    elements.flatMap((element) =>
      isRecord(element) && typeof element['truncationId'] === 'string' ? [element['truncationId']] : [],
    ),
  );
  const sent: number[] = [];
  // Besides messages only Roo's own typed items (reasoning), which are not sent; anything else is kept as it is
  // and reported, never silently passed over.
  const problems: SessionProblem[] = [];
  elements.forEach((element, index) => {
    if (!isRecord(element) || typeof element['role'] !== 'string') {
      if (!isRecord(element) || typeof element['type'] !== 'string')
        problems.push({ file, why: `element ${index} is not a message (an object with a string role): kept as it is` });
      return;
    }
    if (index < Math.max(lastSummary, 0)) return;
    if (typeof element['truncationParent'] === 'string' && markers.has(element['truncationParent'])) return;
    sent.push(index);
  });
  const stored = sent.map((index) => {
    const element = elements[index] as Record<string, unknown>;
    return { role: element['role'], content: element['content'] };
  });
  const cline = elements.some((element) => isRecord(element) && isRecord(element['modelInfo']));
  const native: { role: unknown; content: unknown }[] = cline ? clineMend(stored) : stored;
  const indent = detectIndent(text);
  return {
    agent: 'cline',
    wire: 'anthropic-messages',
    native,
    sources: native.map((_, at) => (at < sent.length ? [sent[at] as number] : [])),
    sourceKind: 'element',
    problems,
    write(repaired) {
      const out = [...elements];
      const dropped = new Set<number>();
      const added = new Map<number, Record<string, unknown>[]>();
      for (const step of alignRepaired(native, repaired)) {
        if (step.kind === 'same') continue;
        // The mend's message after the last one is Cline's to make on resume, not the file's.
        if ((step.kind === 'changed' || step.kind === 'dropped') && step.input >= sent.length) continue;
        if (step.kind === 'changed') {
          if (sameJson(native[step.input]?.content, step.output['content'])) continue;
          const at = sent[step.input] as number;
          out[at] = { ...(elements[at] as Record<string, unknown>), content: step.output['content'] };
        } else if (step.kind === 'dropped') dropped.add(sent[step.input] as number);
        else {
          const at = sent[step.before] ?? elements.length;
          const neighbour = elements[at] ?? elements[at - 1];
          const element: Record<string, unknown> = { role: step.output['role'], content: step.output['content'] };
          if (isRecord(neighbour) && typeof neighbour['ts'] === 'number') element['ts'] = neighbour['ts'];
          const list = added.get(at) ?? [];
          list.push(element);
          added.set(at, list);
        }
      }
      const result: unknown[] = [];
      for (let index = 0; index <= out.length; index += 1) {
        result.push(...(added.get(index) ?? []));
        if (index < out.length && !dropped.has(index)) result.push(out[index]);
      }
      return `${JSON.stringify(result, null, indent || undefined)}${text.endsWith('\n') ? '\n' : ''}`;
    },
  };
}

/**
 * What Cline 2.18.0 sends for `history` on resume, as far as pairing goes: `ContextManager.ensureToolResultsFollowToolUse`
 * (run on every request, after the resume has appended its user message; in the CLI bundle
 * e2e/agents/node_modules/cline/dist/cli.mjs). For each assistant message with `tool_use` blocks (those with an id)
 * that is followed by a user message: if that message's `tool_result`s are not its first blocks in the calls' order,
 * or it has results for other ids, or a call has none, the message becomes the calls' results in order (a missing
 * one `{type: tool_result, tool_use_id, content: "result missing"}`; of two results for one id the later; those for
 * other ids dropped), then its other blocks; string content counts as no blocks (Cline replaces it with []). A
 * message the mend leaves alone keeps its own content. The resume's user message is the last stored user message's
 * blocks (a string one as a text block) followed by the resumption text, or, after an assistant message, a new one
 * (the text only): so the last assistant message's calls get results too, in a user message added at the end when
 * the mend gives one. The context truncation Cline applies before (`conversationHistoryDeletedRange`, kept outside
 * this file) is not modelled.
 */
function clineMend(history: readonly { role: unknown; content: unknown }[]): { role: unknown; content: unknown }[] {
  const out = history.map((message) => ({ ...message }));
  const last = out.at(-1);
  let tail: { role: unknown; content: unknown } | undefined;
  if (last !== undefined && last.role === 'assistant') {
    tail = { role: 'user', content: [] };
    out.push(tail);
  } else if (last !== undefined && last.role === 'user' && typeof last.content === 'string') {
    const original = last.content;
    last.content = [{ type: 'text', text: original }];
    const mended = mendAfter(out.at(-2), last.content as unknown[]);
    last.content = mended ?? original;
    for (let at = 0; at < out.length - 2; at += 1) mendPair(out, at);
    return out;
  }
  for (let at = 0; at < out.length - 1; at += 1) mendPair(out, at);
  if (tail !== undefined && Array.isArray(tail.content) && tail.content.length === 0) out.pop();
  return out;
}

function mendPair(messages: { role: unknown; content: unknown }[], at: number): void {
  const next = messages[at + 1] as { role: unknown; content: unknown };
  if (next.role !== 'user') return;
  const mended = mendAfter(messages[at], Array.isArray(next.content) ? next.content : []);
  if (mended !== undefined) next.content = mended;
}

/** The user message's new content when Cline's mend changes it, else undefined. */
function mendAfter(assistant: { role: unknown; content: unknown } | undefined, content: readonly unknown[]) {
  if (assistant === undefined || assistant.role !== 'assistant' || !Array.isArray(assistant.content)) return;
  const ids: unknown[] = [];
  for (const block of assistant.content)
    if (isRecord(block) && block['type'] === 'tool_use' && block['id']) ids.push(block['id']);
  if (ids.length === 0) return;
  const results = new Map<unknown, unknown>();
  const others: unknown[] = [];
  for (const block of content)
    if (isRecord(block) && block['type'] === 'tool_result' && block['tool_use_id'])
      results.set(block['tool_use_id'], block);
    else others.push(block);
  let changed = false;
  if (results.size > 0) {
    let matched = 0;
    for (let k = 0; k < content.length && matched < ids.length; k += 1) {
      const block = content[k];
      if (isRecord(block) && block['type'] === 'tool_result' && block['tool_use_id'] === ids[matched]) matched += 1;
      else {
        changed = true;
        break;
      }
    }
    if (!changed && matched < results.size) changed = true;
  }
  for (const id of ids)
    if (!results.has(id)) {
      results.set(id, { type: 'tool_result', tool_use_id: id, content: 'result missing' });
      changed = true;
    }
  if (!changed) return;
  return [...ids.map((id) => results.get(id)), ...others];
}

function detectIndent(text: string): number {
  const match = /^\[\r?\n([ \t]+)/.exec(text.trimStart());
  if (match === null) return 0;
  const indent = match[1] as string;
  return indent.includes('\t') ? 2 : indent.length;
}
