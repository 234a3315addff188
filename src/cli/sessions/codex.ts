import { UnstuckError } from '../../core/errors.js';
import type { SessionProblem } from '../../session/index.js';
import type { AgentReader, AgentSession } from './agent-session.js';
import { isRecord } from './align-repaired.js';
import { parseLine } from './jsonl-lines.js';

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
      // Each output line: an input line kept as it is (`line`), or a record the repair made (`record`).
      const out: ({ line: string; record?: undefined } | { line?: undefined; record: Record<string, unknown> })[] = [];
      let emitted = 0; // output items written so far
      const emitUpTo = (end: number) => {
        for (; emitted < end; emitted += 1) out.push(newLine(repaired[emitted]));
      };
      lines.forEach((line, index) => {
        const input = rowAt.get(index);
        if (input === undefined) {
          out.push({ line });
          return;
        }
        const output = kept.get(input);
        // Dropped (or moved: written where the repair put it).
        if (output === undefined) return;
        emitUpTo(output);
        out.push({ line });
        emitted = output + 1;
      });
      emitUpTo(repaired.length);
      return `${renumber(out).join('\n')}${trailingNewline ? '\n' : ''}`;

      /**
       * An item the repair added or changed: the line of the input item it came from, or a new record. A record
       * takes the shape Codex writes (`RolloutLine`: timestamp, ordinal when the rollout numbers its records, type,
       * payload, then the envelope's `metadata`): a changed item keeps its source line's passthrough and metadata;
       * a new one has neither (Codex's `ResponseItemEnvelope::new`). Timestamps and ordinals are set by renumber().
       */
      function newLine(item: unknown): { line: string } | { record: Record<string, unknown> } {
        const from = isRecord(item) ? sourceOf(item) : undefined;
        if (from !== undefined && native[from] === item) return { line: lines[(rows[from] as Row).line] as string };
        const source = from === undefined ? undefined : (rows[from] as Row);
        const payload: Record<string, unknown> = isRecord(item) ? { ...item } : { content: item };
        if (source?.payload[PASSTHROUGH] !== undefined) payload[PASSTHROUGH] = source.payload[PASSTHROUGH];
        const record: Record<string, unknown> = { timestamp: undefined, ordinal: undefined };
        record['type'] = 'response_item';
        record['payload'] = payload;
        if (source?.record['metadata'] !== undefined) record['metadata'] = source.record['metadata'];
        return { record };
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

  /**
   * The output lines as text. New records take the timestamp of the line before them (the first line's when
   * there is none), so the file's times still only go forward. When the rollout numbers its records (Codex's
   * paginated history mode: `ordinal` 0, 1, 2, … on every line, the next one written being the last plus one, and a
   * gap or repeat refused on resume), every record gets its place's number: a new record its own, and a kept line
   * whose number moved (a line dropped or added before it) only that field rewritten, the rest byte for byte.
   */
  function renumber(
    out: readonly ({ line: string; record?: undefined } | { line?: undefined; record: Record<string, unknown> })[],
  ): string[] {
    const numbered = paginated(lines);
    const fresh = out.some((entry) => entry.record !== undefined);
    let next: number | undefined;
    let lastTime: string | undefined;
    return out.map((entry) => {
      if (entry.record === undefined) {
        if (!numbered && !fresh) return entry.line;
        const record = parseLine(entry.line);
        if (!isRecord(record)) return entry.line; // a line that does not parse: kept, not counted
        if (typeof record['timestamp'] === 'string') lastTime = record['timestamp'];
        if (!numbered) return entry.line;
        next ??= typeof record['ordinal'] === 'number' ? record['ordinal'] : 0;
        const line = record['ordinal'] === next ? entry.line : withOrdinal(entry.line, record, next);
        next += 1;
        return line;
      }
      const record: Record<string, unknown> = { ...entry.record, timestamp: lastTime ?? firstTimestamp(lines) };
      if (numbered) {
        next ??= 0;
        record['ordinal'] = next;
        next += 1;
      } else delete record['ordinal'];
      return JSON.stringify(record);
    });
  }
}

/** Whether the rollout numbers its records: session_meta says `history_mode: "paginated"`, or its lines carry ordinals. */
function paginated(lines: readonly string[]): boolean {
  for (const line of lines) {
    const record = parseLine(line);
    if (!isRecord(record)) continue;
    if (record['type'] === 'session_meta' && isRecord(record['payload'])) {
      const mode = record['payload']['history_mode'];
      if (typeof mode === 'string') return mode === 'paginated';
    }
    return typeof record['ordinal'] === 'number';
  }
  return false;
}

/** The first timestamp in the file (for a record the repair puts before every line that has one). */
function firstTimestamp(lines: readonly string[]): string {
  for (const line of lines) {
    const record = parseLine(line);
    if (isRecord(record) && typeof record['timestamp'] === 'string') return record['timestamp'];
  }
  return new Date(0).toISOString();
}

/** As Codex serialises a line: `{"timestamp":"…","ordinal":N,…`; only N is replaced. */
const ORDINAL_PREFIX = /^(\{"timestamp":"(?:[^"\\]|\\.)*","ordinal":)(\d+)(?=[,}])/;

function withOrdinal(line: string, record: Record<string, unknown>, ordinal: number): string {
  if (ORDINAL_PREFIX.test(line)) return line.replace(ORDINAL_PREFIX, `$1${ordinal}`);
  if ('ordinal' in record) return JSON.stringify({ ...record, ordinal });
  const { timestamp, ...rest } = record;
  return JSON.stringify({ timestamp, ordinal, ...rest });
}

function isRolloutRecord(value: unknown): boolean {
  return isRecord(value) && typeof value['type'] === 'string' && 'payload' in value;
}

function keyOf(item: Record<string, unknown>): string | undefined {
  if (typeof item['id'] === 'string') return `${item['type']} id ${item['id']}`;
  if (typeof item['call_id'] === 'string') return `${item['type']} call ${item['call_id']}`;
  return undefined;
}
