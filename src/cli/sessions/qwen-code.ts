import { randomUUID } from 'node:crypto';
import { UnstuckError } from '../../core/errors.js';
import type { SessionProblem } from '../../session/index.js';
import type { AgentReader, AgentSession } from './agent-session.js';
import { alignRepaired, type Block, isRecord, sameJson } from './align-repaired.js';
import { firstLines, parseLine } from './jsonl-lines.js';

/**
 * Qwen Code's chat file (`~/.qwen/projects/<cwd-slug>/chats/<session>.jsonl`, under `$QWEN_RUNTIME_DIR` or
 * `$QWEN_HOME` when set): one record a line, `{uuid, parentUuid, sessionId, type: user | assistant | tool_result |
 * system, message?: {role, parts}}`, the parts in Gemini form (functionCall / functionResponse with ids). On
 * `--resume` Qwen Code 0.24.4 (`SessionService.loadSession` → `prepareTranscriptRecords`, then
 * `buildSessionHistoryFromConversation`) takes the newest conversation record as the leaf, walks `parentUuid` back
 * (records of one uuid are one record, their parts joined), and makes the history from the records on that chain:
 * each record's message one content, a `mid_turn_user_message` joined to the user content before it, a
 * `chat_compression` record's `compressedHistory` in place of everything before it, system records otherwise none.
 * That history goes out as OpenAI chat (functionCall → `tool_calls`, functionResponse → a `tool` message with its
 * id as `tool_call_id`), so it is read here as OpenAI chat (the core's Gemini converter keeps the ids) and checked
 * and repaired by the chat rules — ids and all, which Gemini's own rules, pairing by count, would not see. A repair
 * goes back through the converter and rewrites only the records it touched; a new record gets a fresh uuid and is
 * linked into the chain; every other line is kept byte for byte. See docs/decisions/qwen-code-sessions.md.
 */
export const qwenCodeReader: AgentReader = {
  agent: 'qwen-code',
  label: 'Qwen Code',
  detect(_file, text) {
    for (const line of firstLines(text, 40)) {
      const value = parseLine(line);
      if (isQwenRecord(value)) return true;
    }
    return false;
  },
  read: readQwenChat,
};

const RECORD_TYPES = new Set(['user', 'assistant', 'tool_result', 'system']);
/** System subtypes that are not links of the conversation (Qwen Code's NON_CONVERSATION / ARTIFACT subtypes). */
const NOT_CONVERSATION = new Set([
  'session_sources_snapshot',
  'managed_session_header_v1',
  'managed_session_event_v1',
  'managed_session_commit_v1',
  'session_artifact_event',
  'session_artifact_snapshot',
]);

/** A Qwen Code record: identity fields as its validateTranscriptRecord wants them, and a Gemini-form message. */
function isQwenRecord(value: unknown): value is Record<string, unknown> {
  if (!isRecord(value) || typeof value['uuid'] !== 'string' || typeof value['sessionId'] !== 'string') return false;
  if (!('parentUuid' in value) || !RECORD_TYPES.has(value['type'] as string)) return false;
  const message = value['message'];
  return (isRecord(message) && Array.isArray(message['parts'])) || typeof value['provenance'] === 'string';
}

interface Row {
  /** 0-based line index. */
  line: number;
  value: Record<string, unknown>;
  uuid: string;
  parent: string | null;
}

/** One content of the history: the chain records it was made from, or an element of a compression record. */
interface Slot {
  content: { role: string; parts: Block[] };
  rows: Row[];
  compressed?: { row: Row; element: number };
}

function readQwenChat(file: string, text: string): AgentSession {
  const trailingNewline = text.endsWith('\n');
  const lines = (trailingNewline ? text.slice(0, -1) : text).split('\n');
  const problems: SessionProblem[] = [];
  const ordered: Row[] = [];
  const fragments = new Map<string, Row[]>();
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    const value = parseLine(line);
    if (value === undefined) {
      problems.push({ file, line: index + 1, why: 'not valid JSON (kept as it is)' });
      return;
    }
    if (!isRecord(value) || typeof value['uuid'] !== 'string' || value['uuid'] === '') return;
    // Qwen Code's validateTranscriptRecord skips a record without its session id.
    if (typeof value['sessionId'] !== 'string' || value['sessionId'] === '') return;
    const parentValue = value['parentUuid'];
    if (typeof parentValue !== 'string' && parentValue !== null) return;
    if (!RECORD_TYPES.has(value['type'] as string)) return;
    if (value['type'] === 'system' && NOT_CONVERSATION.has(value['subtype'] as string)) return;
    const row: Row = { line: index, value, uuid: value['uuid'], parent: parentValue === '' ? null : parentValue };
    ordered.push(row);
    const list = fragments.get(row.uuid);
    if (list === undefined) fragments.set(row.uuid, [row]);
    else list.push(row);
  });
  const leaf = ordered.at(-1);
  if (leaf === undefined)
    throw new UnstuckError('INPUT_INVALID', 'not a Qwen Code chat: no line is a {uuid, parentUuid, type} record', {
      file,
      position: '1:1',
    });

  // The chain, root first: the first record of each uuid carries the link.
  const chain: Row[] = [];
  const seen = new Set<string>();
  for (let uuid: string | null = leaf.uuid; uuid !== null && !seen.has(uuid); ) {
    seen.add(uuid);
    const row: Row | undefined = fragments.get(uuid)?.[0];
    if (row === undefined) {
      const child = chain.at(-1) as Row;
      problems.push({
        file,
        line: child.line + 1,
        why: `parentUuid ${uuid} is not in the file: the history Qwen Code resumes starts here`,
      });
      break;
    }
    chain.push(row);
    uuid = row.parent;
  }
  chain.reverse();

  let slots: Slot[] = [];
  /** The last record that gave the history a message (what a local slash command's result looks back at). */
  let lastMaterial: Row | undefined;
  for (const row of chain) {
    const value = row.value;
    if (value['type'] === 'system') {
      const payload = value['systemPayload'];
      if (value['subtype'] === 'chat_compression' && isRecord(payload) && payload['compressedHistory']) {
        const history = Array.isArray(payload['compressedHistory']) ? payload['compressedHistory'] : [];
        lastMaterial = undefined;
        slots = history.flatMap((content, element) =>
          isRecord(content) && typeof content['role'] === 'string' && Array.isArray(content['parts'])
            ? [
                {
                  content: content as Slot['content'],
                  rows: [],
                  compressed: { row, element },
                },
              ]
            : [],
        );
      } else if (value['subtype'] === 'slash_command') {
        // A slash command answered locally (not sent to the model): Qwen Code takes its prompt back out of the history.
        const previous = lastMaterial?.value;
        const parts = isRecord(previous?.['message']) ? previous['message']['parts'] : undefined;
        const items = isRecord(payload) ? payload['outputHistoryItems'] : undefined;
        if (
          isRecord(payload) &&
          payload['phase'] === 'result' &&
          payload['sentToModel'] !== true &&
          Array.isArray(items) &&
          items.length > 0 &&
          items.every((item) => isRecord(item) && item['type'] === 'assistant') &&
          previous?.['type'] === 'user' &&
          previous['subtype'] === undefined &&
          Array.isArray(parts) &&
          parts.length === 1 &&
          isRecord(parts[0]) &&
          Object.keys(parts[0]).length === 1 &&
          parts[0]['text'] === payload['rawCommand'] &&
          slots.at(-1)?.rows.includes(lastMaterial as Row)
        )
          slots.pop();
        if (previous?.['type'] === 'user') lastMaterial = undefined;
      }
      continue;
    }
    if (value['subtype'] === 'realtime_message') continue;
    const rows = fragments.get(row.uuid) as Row[];
    const withMessage = rows.filter((fragment) => isRecord(fragment.value['message']));
    if (withMessage.length === 0) continue;
    lastMaterial = row;
    const first = withMessage[0]?.value['message'] as Record<string, unknown>;
    const parts = withMessage.flatMap((fragment) => partsOf(fragment.value['message']));
    const role = typeof first['role'] === 'string' ? first['role'] : value['type'] === 'assistant' ? 'model' : 'user';
    const previous = slots.at(-1);
    if (value['subtype'] === 'mid_turn_user_message' && previous?.content.role === 'user') {
      previous.content = { ...previous.content, parts: [...previous.content.parts, ...parts] };
      previous.rows.push(...withMessage);
      continue;
    }
    // Qwen Code's validateTranscriptRecord keeps only a message's role and parts: that is what is sent.
    slots.push({ content: { role, parts }, rows: withMessage });
  }
  const { native, origins } = toChat(slots);
  return {
    agent: 'qwen-code',
    wire: 'openai-chat',
    native,
    sources: origins.map((origin) => {
      const slot = slots[origin.slot] as Slot;
      return slot.compressed !== undefined
        ? [slot.compressed.row.line + 1]
        : [...new Set(slot.rows.map((row) => row.line + 1))];
    }),
    sourceKind: 'line',
    problems,
    write: (repaired) => writeBack({ lines, trailingNewline, chain, ordered, slots, native, origins, file }, repaired),
  };
}

type ChatMessage = Record<string, unknown>;

/** Where a chat message came from: its content, and the parts of it that made the message. */
interface Origin {
  slot: number;
  kind: 'model' | 'tool' | 'text';
  parts: Block[];
}

/**
 * The contents as Qwen Code's OpenAI converter (convertLlmRequestToOpenAI, processContent) sends them: a model
 * content is one assistant message (its non-thought text joined, its functionCalls as tool_calls, a repeated call
 * id once, nothing when it has neither); a user content is a tool message per functionResponse (a repeated id once,
 * the response's `output` or `error` text as content), then one user message of its text parts (empty ones left out).
 */
function toChat(slots: readonly Slot[]): { native: ChatMessage[]; origins: Origin[] } {
  const native: ChatMessage[] = [];
  const origins: Origin[] = [];
  slots.forEach((slot, index) => {
    const parts = slot.content.parts;
    if (slot.content.role === 'model') {
      const message = assistantOf(parts);
      if (message === undefined) return;
      native.push(message);
      origins.push({ slot: index, kind: 'model', parts });
      return;
    }
    const seen = new Set<string>();
    const rest: Block[] = [];
    for (const part of parts) {
      const response = part['functionResponse'];
      if (!isRecord(response)) {
        rest.push(part);
        continue;
      }
      const id = typeof response['id'] === 'string' ? response['id'] : '';
      if (id !== '' && seen.has(id)) continue;
      seen.add(id);
      native.push({
        role: 'tool',
        tool_call_id: id,
        ...(typeof response['name'] === 'string' ? { name: response['name'] } : {}),
        content: responseText(response['response']),
      });
      origins.push({ slot: index, kind: 'tool', parts: [part] });
    }
    const text = rest.filter((part) => typeof part['text'] === 'string' && part['text'] !== '' && !part['thought']);
    if (text.length > 0 || rest.some((part) => part['inlineData'] !== undefined || part['fileData'] !== undefined)) {
      native.push({
        role: 'user',
        content: text.map((part) => ({ type: 'text', text: part['text'] })),
      });
      origins.push({ slot: index, kind: 'text', parts: rest });
    }
  });
  return { native, origins };
}

function assistantOf(parts: readonly Block[]): ChatMessage | undefined {
  const text = parts
    .filter((part) => typeof part['text'] === 'string' && part['text'] !== '' && !part['thought'])
    .map((part) => part['text'])
    .join('');
  const reasoning = parts
    .filter((part) => part['thought'] && typeof part['text'] === 'string')
    .map((part) => part['text'])
    .join('');
  const seen = new Set<string>();
  const calls: ChatMessage[] = [];
  parts.forEach((part) => {
    const call = part['functionCall'];
    if (!isRecord(call)) return;
    const id = typeof call['id'] === 'string' && call['id'] !== '' ? call['id'] : `call_${calls.length}`;
    if (seen.has(id)) return;
    seen.add(id);
    calls.push({
      id,
      type: 'function',
      function: {
        name: typeof call['name'] === 'string' ? call['name'] : '',
        arguments: JSON.stringify(call['args'] ?? {}),
      },
    });
  });
  if (text === '' && calls.length === 0 && reasoning === '') return undefined;
  const message: ChatMessage = { role: 'assistant', content: text || (reasoning === '' ? null : '') };
  if (calls.length > 0) message['tool_calls'] = calls;
  if (reasoning !== '') message['reasoning_content'] = reasoning;
  return message;
}

/** Qwen Code's extractFunctionResponseContent: `output`, else `error`, else the JSON of the response. */
function responseText(response: unknown): string {
  if (response === null || response === undefined) return '';
  if (typeof response === 'string') return response;
  if (isRecord(response)) {
    if (typeof response['output'] === 'string') return response['output'];
    if (typeof response['error'] === 'string') return response['error'];
  }
  return JSON.stringify(response) ?? '';
}

interface WriteInput {
  file: string;
  lines: string[];
  trailingNewline: boolean;
  chain: Row[];
  ordered: Row[];
  slots: Slot[];
  native: ChatMessage[];
  origins: Origin[];
}

/** Records the repair adds: after the content `after` (-1: before the first), all of one role. */
interface Group {
  after: number;
  role: string;
  parts: Block[];
  /** The record of a moved message, whose fields the new record keeps. */
  moved?: Record<string, unknown>;
}

/**
 * The repaired chat messages back into the file, lined up with the messages read (an untouched message is the same
 * object). Each content is rebuilt from its messages (an untouched message gives back its own parts, untouched); a
 * content whose parts come out the same keeps its line. A content left with no parts loses its records, their
 * children linked to the removed record's parent; a message added where no content of its role is (a result for a
 * call that had none) is a new record (fresh uuid) right after the record of the content before it, the chain
 * record that hung from that one now hanging from it. Every other line is the same bytes.
 */
function writeBack(input: WriteInput, repaired: readonly unknown[]): string {
  const { lines, slots, origins } = input;
  const names = new Map<string, string>();
  for (const message of [...input.native, ...repaired])
    if (isRecord(message) && Array.isArray(message['tool_calls']))
      for (const call of message['tool_calls'].filter(isRecord))
        if (typeof call['id'] === 'string' && isRecord(call['function']))
          names.set(call['id'], String(call['function']['name'] ?? ''));
  const newParts: Block[][] = slots.map(() => []);
  const touched = new Set<number>();
  const groups: Group[] = [];
  let last = -1;
  let group: Group | undefined;
  // In the order of the repaired history (the alignment lists a moved message before the ones added beside it).
  const steps = alignRepaired(input.native, repaired);
  const position = new Map<unknown, number>();
  repaired.forEach((message, index) => {
    if (!position.has(message)) position.set(message, index);
  });
  const at = (step: (typeof steps)[number]) =>
    step.kind === 'dropped' ? -1 : (position.get(step.output) ?? Number.MAX_SAFE_INTEGER);
  const ordered = steps
    .map((step, index) => ({ step, index }))
    .sort((a, b) => at(a.step) - at(b.step) || a.index - b.index);
  for (const { step } of ordered) {
    if (step.kind === 'same' || step.kind === 'changed') {
      const origin = origins[step.input] as Origin;
      if (step.kind === 'changed') touched.add(origin.slot);
      newParts[origin.slot]?.push(...(step.kind === 'same' ? origin.parts : partsFor(step.output, origin, names)));
      last = origin.slot;
      group = undefined;
      continue;
    }
    if (step.kind === 'dropped') {
      touched.add((origins[step.input] as Origin).slot);
      continue;
    }
    const from = step.from === undefined ? undefined : (origins[step.from] as Origin);
    if (from !== undefined) touched.add(from.slot);
    const parts = partsFor(step.output, from, names);
    const role = step.output['role'] === 'assistant' ? 'model' : 'user';
    const lastSlot = slots[last];
    // A message of the role of the content just written (and not a result beside text, or text beside results) joins it.
    if (
      group === undefined &&
      lastSlot !== undefined &&
      lastSlot.content.role === role &&
      step.output['role'] !== 'tool' &&
      lastSlot.rows[0]?.value['type'] !== 'tool_result'
    ) {
      newParts[last]?.push(...parts);
      touched.add(last);
      continue;
    }
    const kind = String(step.output['role']);
    if (group !== undefined && group.role === kind) {
      group.parts.push(...parts);
      continue;
    }
    const moved = from === undefined ? undefined : slots[from.slot]?.rows[0]?.value;
    group = { after: last, role: kind, parts: [...parts], ...(moved === undefined ? {} : { moved }) };
    groups.push(group);
  }

  const replaced = new Map<number, Record<string, unknown>>();
  const removed = new Set<number>();
  const current = (row: Row) => replaced.get(row.line) ?? row.value;
  const refuseCompressed = (slot: Slot) => {
    if (slot.compressed === undefined) return;
    throw new UnstuckError(
      'INPUT_INVALID',
      "the repair would change the history inside a chat_compression record (Qwen Code's summary of earlier turns): not rewritten, nothing written",
      { file: input.file, position: String(slot.compressed.row.line + 1) },
    );
  };
  slots.forEach((slot, index) => {
    if (!touched.has(index)) return;
    const parts = newParts[index] as Block[];
    if (sameJson(parts, slot.content.parts)) return;
    refuseCompressed(slot);
    const [first, ...rest] = slot.rows;
    for (const row of rest) removed.add(row.line);
    if (first === undefined) return;
    if (parts.length === 0) {
      removed.add(first.line);
      return;
    }
    const value = current(first);
    replaced.set(first.line, { ...value, message: { ...(value['message'] as Record<string, unknown>), parts } });
  });

  /** New records to put after a line (-1: before the chain's first record). */
  const after = new Map<number, Record<string, unknown>[]>();
  for (const { after: slotIndex, role, parts, moved } of groups) {
    let anchor: Row | undefined;
    for (let index = slotIndex; index >= 0 && anchor === undefined; index -= 1) {
      const slot = slots[index] as Slot;
      if (index === slotIndex || touched.has(index)) refuseCompressed(slot);
      anchor = slot.rows.filter((row) => !removed.has(row.line)).at(-1);
    }
    if (anchor === undefined && slots[0]?.compressed !== undefined) refuseCompressed(slots[0]);
    const model = anchor?.value ?? input.chain[0]?.value ?? {};
    const key = anchor?.line ?? -1;
    const list = after.get(key) ?? [];
    const content = { role: role === 'assistant' ? 'model' : 'user', parts };
    // A moved message keeps its record's fields (a tool result's status among them), under a fresh uuid.
    list.push(
      moved === undefined
        ? newRecord(model, content)
        : { ...moved, uuid: randomUUID(), message: { ...(moved['message'] as Record<string, unknown>), parts } },
    );
    after.set(key, list);
  }

  // Links: each new record hangs from the one before it; the record that hung from the anchor hangs from the last.
  const parentOf = new Map<string, string | null>();
  const rowsByLine = new Map(input.ordered.map((row) => [row.line, row]));
  const chainIndex = new Map(input.chain.map((row, index) => [row.uuid, index]));
  for (const [key, records] of after) {
    const anchor = key === -1 ? undefined : (rowsByLine.get(key) as Row);
    let parent: string | null = anchor === undefined ? (input.chain[0]?.parent ?? null) : anchor.uuid;
    for (const record of records) {
      record['parentUuid'] = parent;
      parent = record['uuid'] as string;
    }
    const child = input.chain[anchor === undefined ? 0 : (chainIndex.get(anchor.uuid) ?? -2) + 1];
    if (child !== undefined) parentOf.set(child.uuid, parent);
  }
  // Children of removed records hang from the nearest ancestor still there.
  const removedUuids = new Set(input.ordered.filter((row) => removed.has(row.line)).map((row) => row.uuid));
  const byUuid = new Map(input.ordered.map((row) => [row.uuid, row]));
  const resolve = (uuid: string | null): string | null => {
    const guard = new Set<string>();
    let at = uuid;
    while (at !== null && removedUuids.has(at) && !guard.has(at)) {
      guard.add(at);
      const row = byUuid.get(at) as Row;
      at = parentOf.get(row.uuid) ?? row.parent;
    }
    return at;
  };
  for (const row of input.ordered) {
    if (removed.has(row.line)) continue;
    const parent = parentOf.has(row.uuid) ? (parentOf.get(row.uuid) as string | null) : row.parent;
    const resolved = resolve(parent);
    if (resolved !== row.parent) replaced.set(row.line, { ...current(row), parentUuid: resolved });
  }
  for (const records of after.values())
    for (const record of records) {
      const parent = record['parentUuid'];
      if (typeof parent === 'string' && removedUuids.has(parent)) record['parentUuid'] = resolve(parent);
    }

  const out: string[] = [];
  for (const record of after.get(-1) ?? []) out.push(JSON.stringify(record));
  lines.forEach((line, index) => {
    if (!removed.has(index)) {
      const value = replaced.get(index);
      out.push(value === undefined ? line : JSON.stringify(value));
    }
    for (const record of after.get(index) ?? []) out.push(JSON.stringify(record));
  });
  return `${out.join('\n')}${input.trailingNewline ? '\n' : ''}`;
}

/**
 * The Gemini parts of a repaired chat message, reusing what it came from: an assistant message keeps its
 * content's thoughts and other parts, its text parts when the text is the same, each call's part when the call is
 * the same (a renamed id changes only the id); a tool message keeps its response unless its text changed.
 */
function partsFor(message: Record<string, unknown>, origin: Origin | undefined, names: Map<string, string>): Block[] {
  const old = origin?.parts ?? [];
  const role = message['role'];
  if (role === 'assistant') {
    const text = typeof message['content'] === 'string' ? message['content'] : textOf(message['content']);
    const oldText = old.filter((part) => typeof part['text'] === 'string' && !part['thought']);
    const parts: Block[] = old.filter((part) =>
      typeof part['text'] !== 'string' || part['thought'] ? !isRecord(part['functionCall']) : false,
    );
    if (text !== '') parts.push(...(oldText.map((part) => part['text']).join('') === text ? oldText : [{ text }]));
    const calls = Array.isArray(message['tool_calls']) ? message['tool_calls'].filter(isRecord) : [];
    const oldCalls = old.filter((part) => isRecord(part['functionCall']));
    for (const call of calls) {
      const fn = isRecord(call['function']) ? call['function'] : {};
      const args = parseArgs(fn['arguments']);
      const same = oldCalls.find((part) => {
        const known = part['functionCall'] as Record<string, unknown>;
        return known['name'] === fn['name'] && sameJson(known['args'] ?? {}, args);
      });
      const known = same?.['functionCall'] as Record<string, unknown> | undefined;
      if (same !== undefined && known?.['id'] === call['id']) parts.push(same);
      else if (same !== undefined) parts.push({ ...same, functionCall: { ...known, id: call['id'] } });
      else parts.push({ functionCall: { id: call['id'], name: fn['name'], args } });
      if (same !== undefined) oldCalls.splice(oldCalls.indexOf(same), 1);
    }
    return parts;
  }
  if (role === 'tool') {
    const id = typeof message['tool_call_id'] === 'string' ? message['tool_call_id'] : '';
    const text = typeof message['content'] === 'string' ? message['content'] : textOf(message['content']);
    const part = old.find((candidate) => isRecord(candidate['functionResponse']));
    const response = part?.['functionResponse'] as Record<string, unknown> | undefined;
    const name = typeof message['name'] === 'string' ? message['name'] : (response?.['name'] ?? names.get(id) ?? '');
    if (part !== undefined && response !== undefined && responseText(response['response']) === text)
      return [response['id'] === id ? part : { ...part, functionResponse: { ...response, id } }];
    // Another id and another text: a result the repair wrote (a call that had none), an error as Qwen Code's own are.
    const written = response === undefined || response['id'] !== id;
    return [{ functionResponse: { id, name, response: written ? { error: text } : { output: text } } }];
  }
  const text = typeof message['content'] === 'string' ? message['content'] : textOf(message['content']);
  const oldText = old.filter((part) => typeof part['text'] === 'string' && part['text'] !== '' && !part['thought']);
  if (oldText.map((part) => part['text']).join('') === text) return old;
  return text === '' ? [] : [{ text }];
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .filter(isRecord)
    .map((part) => (typeof part['text'] === 'string' ? part['text'] : ''))
    .join('');
}

function parseArgs(text: unknown): unknown {
  if (typeof text !== 'string') return text ?? {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A record for a content the repair added, in the style of the record it sits beside: its session, cwd, version. */
function newRecord(model: Record<string, unknown>, content: Record<string, unknown>): Record<string, unknown> {
  const parts = Array.isArray(content['parts']) ? (content['parts'] as Block[]) : [];
  const role = content['role'] === 'model' ? 'model' : 'user';
  const results = parts.filter((part) => isRecord(part['functionResponse']));
  const type =
    role === 'model' ? 'assistant' : results.length > 0 && results.length === parts.length ? 'tool_result' : 'user';
  const record: Record<string, unknown> = { uuid: randomUUID(), parentUuid: null };
  for (const key of ['sessionId', 'timestamp']) if (key in model) record[key] = model[key];
  record['type'] = type;
  record['provenance'] =
    type === 'assistant' ? 'assistant_output' : type === 'tool_result' ? 'tool_result' : 'real_user';
  for (const key of ['cwd', 'version']) if (key in model) record[key] = model[key];
  if (type === 'assistant' && 'model' in model) record['model'] = model['model'];
  record['message'] = { role, parts };
  const first = results[0]?.['functionResponse'] as Record<string, unknown> | undefined;
  if (type === 'tool_result' && results.length === 1 && typeof first?.['id'] === 'string')
    record['toolCallResult'] = { callId: first['id'], status: 'error', resultDisplay: '', executionStatus: 'error' };
  return record;
}

function partsOf(message: unknown): Block[] {
  return isRecord(message) && Array.isArray(message['parts']) ? message['parts'].filter(isRecord) : [];
}
