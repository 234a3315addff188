import { UnstuckError } from '../../core/errors.js';
import type { SessionProblem } from '../../session/index.js';
import type { AgentReader, AgentSession } from './agent-session.js';
import { isRecord } from './align-repaired.js';

/** The field Codex keeps beside each item in the rollout and strips before sending it. */
const PASSTHROUGH = 'internal_chat_message_metadata_passthrough';

/**
 * Codex's rollout file (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-….jsonl`): one `{timestamp, ordinal, type, payload}`
 * record a line. On resume Codex sends the `response_item` payloads in file order as the Responses `input` (less
 * the `internal_chat_message_metadata_passthrough` field), then the new user message: that is what is read here
 * (as the 0.171.0 binary did with the fixtures in test/fixtures/agents/codex). Every other line (`session_meta`,
 * `event_msg`, `turn_context`, `world_state`, usage records, lines that do not parse) is kept byte for byte; a
 * repair rewrites only the `response_item` lines it touched (drops a line, adds one, moves one).
 */
export const codexReader: AgentReader = {
  agent: 'codex',
  label: 'Codex',
  evidence: 'its first line a session_meta record with a payload object',
  detect(_file, text) {
    const first = parseLine(text.slice(0, text.indexOf('\n') === -1 ? text.length : text.indexOf('\n')));
    return isRecord(first) && first['type'] === 'session_meta' && isRecord(first['payload']);
  },
  read: readCodexRollout,
};

interface Row {
  /** 0-based line index. */
  line: number;
  record: Record<string, unknown>;
  payload: Record<string, unknown>;
}

function readCodexRollout(file: string, text: string): AgentSession {
  const trailingNewline = text.endsWith('\n');
  const lines = (trailingNewline ? text.slice(0, -1) : text).split('\n');
  const problems: SessionProblem[] = [];
  const rows: Row[] = [];
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    const record = parseLine(line);
    if (!isRecord(record)) {
      problems.push({ file, line: index + 1, why: 'not valid JSON (kept as it is)' });
      return;
    }
    if (record['type'] === 'compacted')
      problems.push({
        file,
        line: index + 1,
        why: 'a compacted record: Codex resumes from its replacement history, not read here (kept as it is)',
      });
    if (record['type'] !== 'response_item') return;
    const payload = record['payload'];
    if (!isRecord(payload) || typeof payload['type'] !== 'string') {
      problems.push({ file, line: index + 1, why: 'response_item without an item payload (kept as it is)' });
      return;
    }
    rows.push({ line: index, record, payload });
  });
  if (!lines.some((line) => isRolloutRecord(parseLine(line))))
    throw new UnstuckError('INPUT_INVALID', 'not a Codex rollout: no line is a {timestamp, type, payload} record', {
      file,
      position: '1:1',
    });
  const native = rows.map((row) => {
    const { [PASSTHROUGH]: _passthrough, ...item } = row.payload;
    return item;
  });
  return {
    agent: 'codex',
    wire: 'responses-input',
    native,
    sources: rows.map((row) => [row.line + 1]),
    sourceKind: 'line',
    problems,
    write(repaired) {
      // Greedy anchors: an output item that is an input item (the same object), in order, keeps its line.
      const indexOf = new Map<unknown, number>();
      native.forEach((item, index) => {
        indexOf.set(item, index);
      });
      const anchorOf: number[] = [];
      let next = 0;
      for (const item of repaired) {
        const at = indexOf.get(item);
        if (at !== undefined && at >= next) {
          anchorOf.push(at);
          next = at + 1;
        } else anchorOf.push(-1);
      }
      const kept = new Map<number, number>(); // input index → output index
      anchorOf.forEach((at, output) => {
        if (at >= 0) kept.set(at, output);
      });
      const byKey = new Map<string, number[]>();
      native.forEach((item, index) => {
        const key = keyOf(item);
        if (key === undefined) return;
        const list = byKey.get(key) ?? [];
        list.push(index);
        byKey.set(key, list);
      });
      const rowAt = new Map<number, number>(rows.map((row, index) => [row.line, index]));
      const out: string[] = [];
      let emitted = 0; // output items written so far
      let previous: Row | undefined;
      const emitUpTo = (end: number) => {
        for (; emitted < end; emitted += 1) out.push(newLine(repaired[emitted], previous ?? rows[0]));
      };
      lines.forEach((line, index) => {
        const input = rowAt.get(index);
        if (input === undefined) {
          out.push(line);
          return;
        }
        const output = kept.get(input);
        if (output === undefined) {
          // Dropped (or moved: written where the repair put it); what the repair put in its place takes its time.
          previous = rows[input];
          return;
        }
        emitUpTo(output);
        out.push(line);
        emitted = output + 1;
        previous = rows[input];
      });
      emitUpTo(repaired.length);
      return `${out.join('\n')}${trailingNewline ? '\n' : ''}`;

      /** An item the repair added or changed: the line of the input item it came from, or a new record. */
      function newLine(item: unknown, near: Row | undefined): string {
        const from = isRecord(item) ? sourceOf(item) : undefined;
        if (from !== undefined && native[from] === item) return lines[(rows[from] as Row).line] as string;
        const base = from === undefined ? near : rows[from];
        const payload: Record<string, unknown> = isRecord(item) ? { ...item } : { content: item };
        if (from !== undefined && (rows[from] as Row).payload[PASSTHROUGH] !== undefined)
          payload[PASSTHROUGH] = (rows[from] as Row).payload[PASSTHROUGH];
        const record: Record<string, unknown> = {};
        if (base?.record['timestamp'] !== undefined) record['timestamp'] = base.record['timestamp'];
        if (base?.record['ordinal'] !== undefined) record['ordinal'] = base.record['ordinal'];
        record['type'] = 'response_item';
        record['payload'] = payload;
        return JSON.stringify(record);
      }

      /** The input item an output item is (moved) or replaces (same type and id, or call id). */
      function sourceOf(item: Record<string, unknown>): number | undefined {
        const same = indexOf.get(item);
        if (same !== undefined) return same;
        const key = keyOf(item);
        if (key === undefined) return undefined;
        return byKey.get(key)?.find((index) => !kept.has(index));
      }
    },
  };
}

function isRolloutRecord(value: unknown): boolean {
  return isRecord(value) && typeof value['type'] === 'string' && 'payload' in value;
}

function keyOf(item: Record<string, unknown>): string | undefined {
  if (typeof item['id'] === 'string') return `${item['type']} id ${item['id']}`;
  if (typeof item['call_id'] === 'string') return `${item['type']} call ${item['call_id']}`;
  return undefined;
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}
