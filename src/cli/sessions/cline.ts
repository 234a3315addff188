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
 * fields.
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
  const native = sent.map((index) => {
    const element = elements[index] as Record<string, unknown>;
    return { role: element['role'], content: element['content'] };
  });
  const indent = detectIndent(text);
  return {
    agent: 'cline',
    wire: 'anthropic-messages',
    native,
    sources: sent.map((index) => [index]),
    sourceKind: 'element',
    problems,
    write(repaired) {
      const out = [...elements];
      const dropped = new Set<number>();
      const added = new Map<number, Record<string, unknown>[]>();
      for (const step of alignRepaired(native, repaired)) {
        if (step.kind === 'same') continue;
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

function detectIndent(text: string): number {
  const match = /^\[\r?\n([ \t]+)/.exec(text.trimStart());
  if (match === null) return 0;
  const indent = match[1] as string;
  return indent.includes('\t') ? 2 : indent.length;
}
