import { randomUUID } from 'node:crypto';
import { UnstuckError } from '../../core/errors.js';
import type { SessionProblem } from '../../session/index.js';
import type { AgentReader, AgentSession } from './agent-session.js';
import { alignRepaired, type Block, contentBlocks, isRecord, sameJson } from './align-repaired.js';
import { firstLines, parseLine } from './jsonl-lines.js';

/**
 * Claude Code's session file (`~/.claude/projects/<dir>/<session>.jsonl`): one event a line, linked by
 * `uuid`/`parentUuid`. On resume Claude Code sends the chain that ends at the newest main-chain event, walked back
 * through `parentUuid` (attachments and system rows are links of that chain, not messages), one assistant message
 * per `message.id` (one event per content block), consecutive user events as one user message, and the results of
 * parallel calls that sit on a side branch of the chain (each parallel result is a child of its own call's event;
 * only the last is on the chain). That is what is read here; every other line (side chains, other branches, lines
 * of types not known, lines that do not parse) is kept byte for byte.
 *
 * Claude Code is not open source: the walk follows what its 2.1.332 binary does with the fixtures in
 * test/fixtures/agents/claude-code (the requests it sent on resume), and the chain logic in its bundled code
 * (newest leaf, `parentUuid` walk, same-`message.id` grouping, sibling tool results; the next event hung from the newest
 * attachment after the leaf; `last-prompt` naming the leaf to resume from).
 */
export const claudeCodeReader: AgentReader = {
  agent: 'claude-code',
  label: 'Claude Code',
  evidence:
    'a line with a string sessionId and a parentUuid, leafUuid or queue-operation type, its message (if any) with a content',
  detect(_file, text) {
    for (const line of firstLines(text, 40)) {
      const value = parseLine(line);
      if (!isRecord(value) || typeof value['sessionId'] !== 'string') continue;
      // Claude Code's messages carry Anthropic content; a chained record whose message has none (Qwen Code's carry
      // Gemini parts) is another agent's.
      if (isRecord(value['message']) && !('content' in value['message'])) return false;
      if ('parentUuid' in value || 'leafUuid' in value || value['type'] === 'queue-operation') return true;
    }
    return false;
  },
  read: readClaudeCodeSession,
};

interface Row {
  /** 0-based line index in the file. */
  line: number;
  value: Record<string, unknown>;
  uuid: string;
  parent: string | null;
}

/** One native message: the rows it was made from, each with the blocks it contributed (in order). */
interface Source {
  role: 'user' | 'assistant';
  rows: { row: Row; blocks: Block[]; stringContent: boolean }[];
}

function readClaudeCodeSession(file: string, text: string): AgentSession {
  const trailingNewline = text.endsWith('\n');
  const lines = (trailingNewline ? text.slice(0, -1) : text).split('\n');
  const problems: SessionProblem[] = [];
  const rows = new Map<string, Row>();
  const ordered: Row[] = [];
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    const value = parseLine(line);
    if (value === undefined) {
      problems.push({ file, line: index + 1, why: 'not valid JSON (kept as it is)' });
      return;
    }
    if (!isRecord(value) || typeof value['uuid'] !== 'string') return;
    const parent = typeof value['parentUuid'] === 'string' ? value['parentUuid'] : null;
    const row: Row = { line: index, value, uuid: value['uuid'], parent };
    rows.set(row.uuid, row);
    ordered.push(row);
  });
  const leaf = ordered.findLast((row) => isMessageRow(row) && row.value['isSidechain'] !== true);
  if (leaf === undefined)
    throw new UnstuckError('INPUT_INVALID', 'a Claude Code session with no user or assistant event', {
      file,
      position: '1',
    });

  // The chain, root first, every row on it (attachments and system rows too: they carry links).
  const chain: Row[] = [];
  const seen = new Set<string>();
  for (let row: Row | undefined = leaf; row !== undefined && !seen.has(row.uuid); ) {
    seen.add(row.uuid);
    chain.push(row);
    if (row.parent === null) break;
    const parent = rows.get(row.parent);
    if (parent === undefined)
      problems.push({
        file,
        line: row.line + 1,
        why: `parentUuid ${row.parent} is not in the file: the chain Claude Code resumes starts here`,
      });
    row = parent;
  }
  chain.reverse();
  const onChain = new Set(chain.map((row) => row.uuid));
  const children = new Map<string, Row[]>();
  for (const row of ordered) {
    if (row.parent === null) continue;
    const list = children.get(row.parent);
    if (list === undefined) children.set(row.parent, [row]);
    else list.push(row);
  }

  // Where the chain ends: Claude Code hangs the next event from the newest row after the leaf message, an attachment
  // or system row (a prompt_snapshot after a tool result, say), and resumes from the newest user/assistant row reached
  // walking up from a row nothing hangs from. An event added after the leaf goes after those rows, not beside them:
  // hung from the leaf itself it would leave the old leaf a leaf (through its attachment), and Claude Code, told by
  // `last-prompt` to resume there, would not send the added event.
  let tip = leaf;
  for (const guard = new Set<string>([leaf.uuid]); ; ) {
    const link = (children.get(tip.uuid) ?? []).findLast(
      (child) => !isMessageRow(child) && child.value['isSidechain'] !== true && !guard.has(child.uuid),
    );
    if (link === undefined) break;
    guard.add(link.uuid);
    tip = link;
  }

  // The message rows in the order sent, with parallel results from side branches put after their calls.
  const sequence: Row[] = [];
  const chainMessages = chain.filter(isMessageRow);
  for (let index = 0; index < chainMessages.length; index += 1) {
    const row = chainMessages[index] as Row;
    sequence.push(row);
    const next = chainMessages[index + 1];
    if (row.value['type'] !== 'assistant' || (next !== undefined && sameMessageId(row, next))) continue;
    // The end of one assistant message: results of its calls that are children of its events but off the chain.
    const group: Row[] = [];
    for (let back = sequence.length - 1; back >= 0; back -= 1) {
      const member = sequence[back] as Row;
      if (member.value['type'] !== 'assistant' || !sameMessageId(member, row)) break;
      group.push(member);
    }
    const callIds = new Set(group.flatMap((member) => toolUseIds(member)));
    const siblings = group
      .flatMap((member) => children.get(member.uuid) ?? [])
      .filter(
        (child) =>
          !onChain.has(child.uuid) &&
          isMessageRow(child) &&
          child.value['type'] === 'user' &&
          child.value['isSidechain'] !== true &&
          toolResultIds(child).some((id) => callIds.has(id)),
      )
      .sort((a, b) => a.line - b.line);
    sequence.push(...siblings);
  }

  const sources: Source[] = [];
  for (const row of sequence) {
    const role = row.value['type'] as 'user' | 'assistant';
    const message = row.value['message'] as Record<string, unknown>;
    const content = message['content'];
    const entry = { row, blocks: contentBlocks(content), stringContent: typeof content === 'string' };
    const last = sources.at(-1);
    const lastRow = last?.rows.at(-1)?.row;
    if (
      last !== undefined &&
      last.role === role &&
      (role === 'user' || (lastRow !== undefined && sameMessageId(lastRow, row)))
    )
      last.rows.push(entry);
    else sources.push({ role, rows: [entry] });
  }
  const native = sources.map(nativeOf);
  return {
    agent: 'claude-code',
    wire: 'anthropic-messages',
    native,
    sources: sources.map((source) => source.rows.map((entry) => entry.row.line + 1)),
    sourceKind: 'line',
    problems,
    write: (repaired) => writeBack({ lines, trailingNewline, rows, chain, leaf, tip, sources, native, repaired }),
  };
}

function nativeOf(source: Source): Record<string, unknown> {
  const [only, ...rest] = source.rows;
  if (only !== undefined && rest.length === 0) {
    const message = only.row.value['message'] as Record<string, unknown>;
    return { role: source.role, content: message['content'] };
  }
  return { role: source.role, content: source.rows.flatMap((entry) => entry.blocks) };
}

/** An event put somewhere new: one made for an added message, or a moved message's own. */
interface Placed {
  event?: Record<string, unknown>;
  row?: Row;
}

interface WriteInput {
  lines: string[];
  trailingNewline: boolean;
  rows: Map<string, Row>;
  chain: Row[];
  /** The newest message row on the chain (Claude Code's leaf), and the row after it that new events hang from. */
  leaf: Row;
  tip: Row;
  sources: Source[];
  native: Record<string, unknown>[];
  repaired: readonly unknown[];
}

/**
 * Puts a repaired history back: a changed message rewrites the content of its own events (their other fields kept,
 * in their order); an added message becomes a new event (fresh uuid) linked into the chain before the event that
 * follows it; a dropped message's events are removed and their children linked to the removed event's parent. Every
 * other line is the same bytes.
 */
function writeBack(input: WriteInput): string {
  const { lines, rows } = input;
  // The chain's end is its tip (the leaf, or the attachment rows after it): what is added at the end follows it.
  const chain = input.tip === input.leaf ? [...input.chain] : [...input.chain, input.tip];
  const replaced = new Map<number, Record<string, unknown>>();
  const removed = new Set<string>();
  /** What goes before a line (or at the end): a new event, or an event moved there. */
  const insertedBefore = new Map<number, Placed[]>();
  const appended: Placed[] = [];
  /** Events of messages the repair moved: linked anew where they now are, their old place bridged. */
  const moved = new Set<string>();
  const movedGroups: { rows: Row[]; parent: string | null }[] = [];
  const parentOf = new Map<string, string | null>();
  const currentValue = (row: Row) => replaced.get(row.line) ?? row.value;
  const setParent = (row: Row, parent: string | null) => {
    replaced.set(row.line, { ...currentValue(row), parentUuid: parent });
    parentOf.set(row.uuid, parent);
  };
  const setContent = (row: Row, content: unknown) => {
    const value = currentValue(row);
    replaced.set(row.line, { ...value, message: { ...(value['message'] as Record<string, unknown>), content } });
  };

  const steps = alignRepaired(input.native, input.repaired);
  const movedInputs = new Set(
    steps.flatMap((step) => (step.kind === 'added' && step.from !== undefined ? [step.from] : [])),
  );
  for (const step of steps) {
    if (step.kind === 'same') continue;
    if (step.kind === 'changed') {
      const source = input.sources[step.input] as Source;
      if (sameJson(input.native[step.input]?.['content'], step.output['content'])) continue;
      distribute(source, step.output['content'], setContent, (row) => removed.add(row.uuid));
      continue;
    }
    if (step.kind === 'dropped') {
      for (const entry of (input.sources[step.input] as Source).rows)
        (movedInputs.has(step.input) ? moved : removed).add(entry.row.uuid);
      continue;
    }
    // Added: a new event before the first event of the next message still there, or after the chain's end.
    const next = input.sources[step.before]?.rows[0]?.row;
    const anchor = next === undefined ? (chain.at(-1) as Row) : next;
    const parent = next === undefined ? anchor.uuid : (parentOf.get(anchor.uuid) ?? anchor.parent);
    let placed: Placed[];
    let last: Row;
    if (step.from !== undefined) {
      // A moved message: its own events, same uuids, linked one after the other from here.
      const group = (input.sources[step.from] as Source).rows.map((entry) => entry.row);
      movedGroups.push({ rows: group, parent });
      placed = group.map((row) => ({ row }));
      last = group.at(-1) as Row;
    } else {
      const event = newEvent(currentValue(anchor), step.output, parent);
      placed = [{ event }];
      last = { line: -1, value: event, uuid: event['uuid'] as string, parent };
    }
    if (next === undefined) {
      appended.push(...placed);
      // A second added message at the end follows this one.
      chain.push(last);
    } else {
      const list = insertedBefore.get(next.line) ?? [];
      list.push(...placed);
      insertedBefore.set(next.line, list);
      setParent(next, last.uuid);
    }
  }
  for (const { rows: group, parent } of movedGroups)
    group.forEach((row, at) => {
      setParent(row, at === 0 ? parent : (group[at - 1] as Row).uuid);
    });

  // Children of removed events, and of moved events at their old place, now hang from the nearest ancestor still
  // there (a moved event's old parent, not its new one).
  const gone = (uuid: string) => removed.has(uuid) || moved.has(uuid);
  if (removed.size > 0 || moved.size > 0) {
    const resolve = (uuid: string | null, through: (uuid: string) => boolean): string | null => {
      const guard = new Set<string>();
      let current = uuid;
      while (current !== null && through(current) && !guard.has(current)) {
        guard.add(current);
        const row = rows.get(current);
        current = row === undefined ? null : moved.has(current) ? row.parent : (parentOf.get(current) ?? row.parent);
      }
      return current;
    };
    for (const row of rows.values()) {
      if (gone(row.uuid)) continue;
      // A link made here to a moved event is its new place: kept. An old link to one is bridged.
      const linked = parentOf.has(row.uuid);
      const parent = linked ? (parentOf.get(row.uuid) as string | null) : row.parent;
      if (parent !== null && (removed.has(parent) || (!linked && moved.has(parent))))
        setParent(row, resolve(parent, gone));
    }
    for (const { rows: group } of movedGroups) {
      const first = group[0] as Row;
      const parent = parentOf.get(first.uuid) ?? null;
      if (parent !== null && removed.has(parent))
        setParent(
          first,
          resolve(parent, (uuid) => removed.has(uuid)),
        );
    }
    for (const placed of [...appended, ...[...insertedBefore.values()].flat()]) {
      const parent = placed.event?.['parentUuid'];
      if (placed.event !== undefined && typeof parent === 'string' && removed.has(parent))
        placed.event['parentUuid'] = resolve(parent, (uuid) => removed.has(uuid));
    }
  }
  /** The nearest message row above `row` that the repair kept (its leaf when `row` is removed). */
  function nearestKept(row: Row): string | undefined {
    const guard = new Set<string>();
    for (let current: Row | undefined = row; current !== undefined && !guard.has(current.uuid); ) {
      guard.add(current.uuid);
      if (!removed.has(current.uuid) && !moved.has(current.uuid) && isMessageRow(current)) return current.uuid;
      const parent: string | null = parentOf.get(current.uuid) ?? current.parent;
      current = parent === null ? undefined : rows.get(parent);
    }
    return undefined;
  }
  const emit = (placed: Placed): string => {
    if (placed.event !== undefined) return JSON.stringify(placed.event);
    const row = placed.row as Row;
    const value = replaced.get(row.line);
    return value === undefined ? (lines[row.line] as string) : JSON.stringify(value);
  };

  // `last-prompt` and `summary` lines name the leaf Claude Code resumes from (`leafUuid`): the old leaf, when events
  // were added after it, is the last added event now; when the repair removed it, its nearest ancestor still there.
  const last = appended.at(-1);
  const newLeaf =
    last !== undefined
      ? ((last.event?.['uuid'] as string | undefined) ?? last.row?.uuid)
      : removed.has(input.leaf.uuid)
        ? nearestKept(input.leaf)
        : undefined;
  if (newLeaf !== undefined)
    lines.forEach((line, index) => {
      if (replaced.has(index) || !line.includes(`"leafUuid":"${input.leaf.uuid}"`)) return;
      const value = parseLine(line);
      if (!isRecord(value) || (value['type'] !== 'last-prompt' && value['type'] !== 'summary')) return;
      if (value['leafUuid'] === input.leaf.uuid) replaced.set(index, { ...value, leafUuid: newLeaf });
    });

  const removedLines = new Set([...removed, ...moved].map((uuid) => (rows.get(uuid) as Row).line));
  const out: string[] = [];
  lines.forEach((line, index) => {
    for (const placed of insertedBefore.get(index) ?? []) out.push(emit(placed));
    if (removedLines.has(index)) return;
    const value = replaced.get(index);
    out.push(value === undefined ? line : JSON.stringify(value));
  });
  out.push(...appended.map(emit));
  return `${out.join('\n')}${input.trailingNewline || appended.length > 0 ? '\n' : ''}`;
}

/**
 * A changed message's blocks back into its events: each block stays in the event it came from (found by identity,
 * then by value); a new block goes with the block before it. When that cannot keep the message's order (blocks moved
 * between events), the first event takes them all and the others are removed.
 */
function distribute(
  source: Source,
  content: unknown,
  setContent: (row: Row, content: unknown) => void,
  remove: (row: Row) => void,
): void {
  const [first, ...rest] = source.rows;
  if (first === undefined) return;
  if (rest.length === 0) {
    if (Array.isArray(content) && content.length === 0) remove(first.row);
    else setContent(first.row, content);
    return;
  }
  const blocks = contentBlocks(content);
  const owner: number[] = [];
  let previous = 0;
  for (const block of blocks) {
    let found = source.rows.findIndex((entry) => entry.blocks.includes(block));
    if (found === -1) found = source.rows.findIndex((entry) => entry.blocks.some((old) => sameJson(old, block)));
    if (found === -1) found = previous;
    owner.push(found);
    previous = found;
  }
  const ordered = owner.every((value, index) => index === 0 || value >= (owner[index - 1] as number));
  source.rows.forEach((entry, index) => {
    const mine = ordered ? blocks.filter((_, at) => owner[at] === index) : index === 0 ? blocks : [];
    if (mine.length === 0) {
      remove(entry.row);
      return;
    }
    const unchanged = mine.length === entry.blocks.length && mine.every((block, at) => block === entry.blocks[at]);
    if (!unchanged) setContent(entry.row, mine);
  });
}

/** A new event in the style of its neighbour: the same session, working directory and version; a fresh uuid. */
function newEvent(
  neighbour: Record<string, unknown>,
  message: Record<string, unknown>,
  parent: string | null,
): Record<string, unknown> {
  const role = message['role'] === 'assistant' ? 'assistant' : 'user';
  const event: Record<string, unknown> = { parentUuid: parent, isSidechain: false, type: role };
  event['message'] =
    role === 'assistant'
      ? {
          id: `msg_unstuck_${randomUUID().replaceAll('-', '')}`,
          type: 'message',
          role,
          model: '<synthetic>',
          content: message['content'],
          stop_reason: null,
          stop_sequence: null,
        }
      : { role, content: message['content'] };
  event['uuid'] = randomUUID();
  for (const key of ['timestamp', 'userType', 'entrypoint', 'cwd', 'sessionId', 'version', 'gitBranch'])
    if (key in neighbour) event[key] = neighbour[key];
  return event;
}

function isMessageRow(row: Row): boolean {
  const type = row.value['type'];
  const message = row.value['message'];
  return (
    (type === 'user' || type === 'assistant') &&
    isRecord(message) &&
    (typeof message['content'] === 'string' || Array.isArray(message['content']))
  );
}

function sameMessageId(a: Row, b: Row): boolean {
  if (a.value['type'] !== 'assistant' || b.value['type'] !== 'assistant') return false;
  const left = (a.value['message'] as Record<string, unknown>)['id'];
  const right = (b.value['message'] as Record<string, unknown>)['id'];
  return typeof left === 'string' && left === right;
}

function toolUseIds(row: Row): string[] {
  return contentBlocks((row.value['message'] as Record<string, unknown>)['content']).flatMap((block) =>
    block['type'] === 'tool_use' && typeof block['id'] === 'string' ? [block['id']] : [],
  );
}

function toolResultIds(row: Row): string[] {
  return contentBlocks((row.value['message'] as Record<string, unknown>)['content']).flatMap((block) =>
    block['type'] === 'tool_result' && typeof block['tool_use_id'] === 'string' ? [block['tool_use_id']] : [],
  );
}
