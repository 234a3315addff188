import { randomUUID } from 'node:crypto';
import { UnstuckError } from '../../core/errors.js';
import type { SessionProblem } from '../../session/index.js';
import type { AgentReader, AgentSession } from './agent-session.js';
import { alignRepaired, type Block, isRecord, sameJson } from './align-repaired.js';
import { parseLine } from './jsonl-lines.js';

/**
 * Gemini CLI's chat file (`~/.gemini/tmp/<project>/chats/session-….jsonl`): a header line, then message records
 * `{id, timestamp, type, content, …}` (the last record with an id wins, in the place its id first appeared),
 * `{"$set": {messages}}` checkpoints (the history replaced) and `{"$rewindTo": id}` (that message and the ones after
 * it removed), as `loadConversationRecord` (packages/core/src/services/chatRecordingService.ts) reads it. On resume
 * `convertSessionToClientHistory` (packages/core/src/utils/sessionUtils.ts) makes the contents: a `user` record is a
 * user turn (unless its text is a slash command or the `<session_context>`), a `gemini` record is a model turn (its
 * thoughts, content and `toolCalls` as functionCalls) followed by a user turn of its `toolCalls[].result`; turns of
 * the same role in a row reach the wire as one (the 0.61.0 binary sent the fixture's two functionResponses in one
 * turn). That is what is read here; lines not part of it are kept byte for byte, and a repair rewrites only the
 * records it touched.
 */
export const geminiCliReader: AgentReader = {
  agent: 'gemini-cli',
  label: 'Gemini CLI',
  evidence: 'its first line a record with string sessionId and projectHash, no parentUuid',
  detect(_file, text) {
    const end = text.indexOf('\n');
    const first = parseLine(end === -1 ? text : text.slice(0, end));
    return (
      isRecord(first) &&
      typeof first['sessionId'] === 'string' &&
      typeof first['projectHash'] === 'string' &&
      !('parentUuid' in first)
    );
  },
  read: readGeminiChat,
};

/** Where a message record is: its own line, or element `element` of a `$set.messages` checkpoint line. */
interface Place {
  line: number;
  element?: number;
}

interface MessageEntry {
  id: string;
  /** Every place the id was written since the last checkpoint; the last is the record that counts. */
  places: Place[];
  record: Record<string, unknown>;
}

/** The part of a turn one record gave: its user content, its model turn, or its tool results. */
interface Piece {
  entry: MessageEntry;
  kind: 'user' | 'model' | 'results';
  parts: Block[];
}

type Content = { role: 'user' | 'model'; parts: Block[] };

function readGeminiChat(file: string, text: string): AgentSession {
  const trailingNewline = text.endsWith('\n');
  const lines = (trailingNewline ? text.slice(0, -1) : text).split('\n');
  const problems: SessionProblem[] = [];
  const parsed: unknown[] = [];
  let entries = new Map<string, MessageEntry>();
  const note = (entry: Map<string, MessageEntry>, id: string, record: Record<string, unknown>, place: Place) => {
    const known = entry.get(id);
    if (known === undefined) entry.set(id, { id, places: [place], record });
    else {
      known.places.push(place);
      known.record = record;
    }
  };
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    const value = parseLine(line);
    parsed[index] = value;
    if (value === undefined) {
      problems.push({ file, line: index + 1, why: 'not valid JSON (kept as it is)' });
      return;
    }
    if (!isRecord(value)) return;
    if (typeof value['$rewindTo'] === 'string') {
      const ids = [...entries.keys()];
      const at = ids.indexOf(value['$rewindTo']);
      for (const id of at === -1 ? ids : ids.slice(at)) entries.delete(id);
    } else if (typeof value['id'] === 'string') note(entries, value['id'], value, { line: index });
    else if (isRecord(value['$set']) && Array.isArray(value['$set']['messages'])) {
      entries = new Map();
      (value['$set']['messages'] as unknown[]).forEach((message, element) => {
        if (isRecord(message) && typeof message['id'] === 'string')
          note(entries, message['id'], message, { line: index, element });
      });
    }
  });

  const header = parsed.find((value) => value !== undefined);
  if (!isRecord(header) || typeof header['sessionId'] !== 'string')
    throw new UnstuckError('INPUT_INVALID', 'not a Gemini CLI chat: its first record has no sessionId', {
      file,
      position: '1:1',
    });
  const pieces: Piece[] = [];
  for (const entry of entries.values()) pieces.push(...piecesOf(entry));
  const contents: Content[] = [];
  const piecesOfContent: Piece[][] = [];
  for (const piece of pieces) {
    const role = piece.kind === 'model' ? 'model' : 'user';
    const last = contents.at(-1);
    if (last !== undefined && last.role === role) {
      last.parts.push(...piece.parts);
      piecesOfContent.at(-1)?.push(piece);
    } else {
      contents.push({ role, parts: [...piece.parts] });
      piecesOfContent.push([piece]);
    }
  }

  return {
    agent: 'gemini-cli',
    wire: 'gemini-contents',
    native: contents,
    sources: piecesOfContent.map((list) => [...new Set(list.map((piece) => lastPlace(piece.entry).line + 1))]),
    sourceKind: 'line',
    problems,
    write(repaired) {
      const edits = new Editor(lines, parsed);
      /** The records whose new value is decided (undefined: the record goes). */
      const updated = new Map<MessageEntry, Record<string, unknown> | undefined>();
      const current = (entry: MessageEntry) => (updated.has(entry) ? updated.get(entry) : entry.record);
      const setPieceParts = (piece: Piece, parts: Block[]) => {
        const record = current(piece.entry);
        if (record === undefined) return;
        updated.set(piece.entry, withParts(record, piece.kind, parts));
      };
      const inserts: { before: number; content: Content }[] = [];
      for (const step of alignRepaired(contents, repaired)) {
        if (step.kind === 'same') continue;
        if (step.kind === 'dropped') {
          for (const piece of piecesOfContent[step.input] as Piece[]) setPieceParts(piece, []);
          continue;
        }
        const parts = Array.isArray(step.output['parts']) ? (step.output['parts'] as unknown[]).filter(isRecord) : [];
        const role = step.output['role'] === 'model' ? 'model' : 'user';
        if (step.kind === 'added') {
          if (step.from !== undefined)
            for (const piece of piecesOfContent[step.from] as Piece[]) setPieceParts(piece, []);
          inserts.push({ before: step.before, content: { role, parts } });
          continue;
        }
        // Changed: each record keeps the parts of its own that are still there; new parts go to the last record.
        const list = piecesOfContent[step.input] as Piece[];
        if (sameJson((contents[step.input] as Content).parts, parts)) continue;
        let rest = parts;
        list.forEach((piece, index) => {
          const mine: Block[] = [];
          const others: Block[] = [];
          const own = [...piece.parts];
          for (const part of rest) {
            const at = own.findIndex((candidate) => candidate === part || sameJson(candidate, part));
            if (at !== -1 && others.length === 0) {
              own.splice(at, 1);
              mine.push(part);
            } else others.push(part);
          }
          rest = others;
          if (index === list.length - 1 && rest.length > 0) {
            if (piece.kind === 'results' && role === 'user')
              inserts.push({ before: step.input + 1, content: { role, parts: rest } });
            else mine.push(...rest);
            rest = [];
          }
          if (!sameJson(mine, piece.parts)) setPieceParts(piece, mine);
        });
      }
      for (const [entry, record] of updated) {
        if (record === undefined) for (const place of entry.places) edits.remove(place);
        else edits.replace(lastPlace(entry), record);
      }
      for (const { before, content } of inserts) {
        const next = piecesOfContent[before]?.[0];
        const near = piecesOfContent[Math.min(before, piecesOfContent.length) - 1]?.at(-1)?.entry.record;
        const record: Record<string, unknown> = { id: randomUUID() };
        if (typeof near?.['timestamp'] === 'string') record['timestamp'] = near['timestamp'];
        record['type'] = content.role === 'model' ? 'gemini' : 'user';
        record['content'] = content.parts;
        if (next === undefined || next.kind === 'results') edits.insertAfter(lastPlace(pieceBefore(before)), record);
        else edits.insertBefore(next.entry.places[0] as Place, record);
      }
      return `${edits.text()}${trailingNewline ? '\n' : ''}`;

      function pieceBefore(before: number): MessageEntry {
        const list = piecesOfContent[Math.min(before, piecesOfContent.length) - 1] ?? piecesOfContent[0] ?? [];
        const piece = (before < piecesOfContent.length ? piecesOfContent[before]?.[0] : undefined) ?? list.at(-1);
        return (piece as Piece).entry;
      }
    },
  };
}

function lastPlace(entry: MessageEntry): Place {
  return entry.places.at(-1) as Place;
}

/** The pieces of one record, as convertSessionToClientHistory turns it into turns. */
function piecesOf(entry: MessageEntry): Piece[] {
  const record = entry.record;
  if (record['type'] === 'user') {
    const parts = partArray(record['content']);
    if (isIgnoredUserContent(partsToString(parts).trim())) return [];
    return [{ entry, kind: 'user', parts }];
  }
  if (record['type'] !== 'gemini') return [];
  const contentParts = record['content'] ? partArray(record['content']) : [];
  const modern = contentParts.some((part) => part['functionCall'] !== undefined || part['thought']);
  const calls = toolCallsOf(record);
  const modelParts = modern
    ? contentParts
    : [...thoughtParts(record), ...contentParts, ...calls.map((call) => ({ functionCall: functionCallOf(call) }))];
  if (modelParts.length === 0) return [];
  const pieces: Piece[] = [{ entry, kind: 'model', parts: modelParts }];
  const results = calls.flatMap((call) => resultParts(call));
  if (results.length > 0) pieces.push({ entry, kind: 'results', parts: results });
  return pieces;
}

function toolCallsOf(record: Record<string, unknown>): Record<string, unknown>[] {
  return Array.isArray(record['toolCalls']) ? record['toolCalls'].filter(isRecord) : [];
}

function functionCallOf(call: Record<string, unknown>): Record<string, unknown> {
  return { id: call['id'], name: call['name'], args: call['args'] };
}

function thoughtParts(record: Record<string, unknown>): Block[] {
  if (!Array.isArray(record['thoughts'])) return [];
  return record['thoughts'].filter(isRecord).map((thought) => ({
    text: thought['subject'] ? `**${thought['subject']}** ${thought['description']}` : thought['description'],
    thought: true,
  }));
}

function resultParts(call: Record<string, unknown>): Block[] {
  const result = call['result'];
  if (!result) return [];
  if (typeof result === 'string')
    return [{ functionResponse: { id: call['id'], name: call['name'], response: { output: result } } }];
  if (Array.isArray(result)) return partArray(result);
  return isRecord(result) ? [result] : [];
}

/** A record with `parts` in place of what its piece of kind `kind` was made from; undefined: the record goes. */
function withParts(
  record: Record<string, unknown>,
  kind: Piece['kind'],
  parts: Block[],
): Record<string, unknown> | undefined {
  if (kind === 'user') return parts.length === 0 ? undefined : { ...record, content: parts };
  const calls = toolCallsOf(record);
  if (kind === 'results') {
    const byId = new Map<unknown, Block[]>();
    for (const part of parts) {
      const id = isRecord(part['functionResponse']) ? part['functionResponse']['id'] : undefined;
      byId.set(id, [...(byId.get(id) ?? []), part]);
    }
    const toolCalls = calls.map((call) => {
      const mine = byId.get(call['id']);
      if (mine === undefined) {
        const { result: _result, ...rest } = call;
        return rest;
      }
      return { ...call, result: mine };
    });
    return { ...record, toolCalls };
  }
  if (parts.length === 0) return undefined;
  const contentParts = record['content'] ? partArray(record['content']) : [];
  if (contentParts.some((part) => part['functionCall'] !== undefined || part['thought']))
    return { ...record, content: parts };
  const thoughts = parts.filter((part) => part['thought'] === true);
  const callParts = parts.filter((part) => isRecord(part['functionCall']));
  const other = parts.filter((part) => part['thought'] !== true && !isRecord(part['functionCall']));
  const byId = new Map(calls.map((call) => [call['id'], call]));
  const toolCalls = callParts.map((part) => {
    const call = part['functionCall'] as Record<string, unknown>;
    const known = byId.get(call['id']);
    return known === undefined
      ? { id: call['id'], name: call['name'], args: call['args'] ?? {}, status: 'success' }
      : { ...known, name: call['name'], args: call['args'] };
  });
  const next: Record<string, unknown> = { ...record };
  next['content'] =
    typeof record['content'] === 'string' && other.length <= 1 && (other.length === 0 || isTextOnly(other[0]))
      ? ((other[0]?.['text'] as string | undefined) ?? '')
      : other;
  if (Array.isArray(record['thoughts']) && thoughts.length !== thoughtParts(record).length) {
    const kept = new Set(thoughts.map((part) => part['text']));
    next['thoughts'] = record['thoughts'].filter(
      (_thought, index) => kept.has(thoughtParts(record)[index]?.['text']) || false,
    );
  }
  if (calls.length > 0 || toolCalls.length > 0) next['toolCalls'] = toolCalls;
  return next;
}

function isTextOnly(part: Block | undefined): boolean {
  return part !== undefined && typeof part['text'] === 'string' && Object.keys(part).length === 1;
}

function partArray(content: unknown): Block[] {
  if (Array.isArray(content))
    return content.map((part) => (typeof part === 'string' ? { text: part } : part)).filter(isRecord);
  if (typeof content === 'string') return [{ text: content }];
  return isRecord(content) ? [content] : [];
}

/** Gemini CLI's partToString with verbose: non-text parts as a summary. */
function partsToString(parts: Block[]): string {
  return parts
    .map((part) => {
      if (part['thought'] !== undefined) return `[Thought: ${part['thought']}]`;
      if (isRecord(part['functionCall'])) return `[Function Call: ${part['functionCall']['name']}]`;
      if (isRecord(part['functionResponse'])) return `[Function Response: ${part['functionResponse']['name']}]`;
      if (part['fileData'] !== undefined) return '[File Data]';
      if (part['inlineData'] !== undefined) return '[Media]';
      if (part['codeExecutionResult'] !== undefined) return '[Code Execution Result]';
      if (part['executableCode'] !== undefined) return '[Executable Code]';
      if (part['videoMetadata'] !== undefined) return '[Video Metadata]';
      return typeof part['text'] === 'string' ? part['text'] : '';
    })
    .join('');
}

function isIgnoredUserContent(trimmed: string): boolean {
  return (
    trimmed.length === 0 ||
    trimmed.startsWith('/') ||
    trimmed.startsWith('?') ||
    trimmed.startsWith('<session_context>') ||
    trimmed.startsWith('<hook_context>')
  );
}

/** Line edits on the chat file: a record replaced, removed, or a new one put before or after another. */
class Editor {
  private readonly replaced = new Map<number, string | null>();
  private readonly before = new Map<number, string[]>();
  private readonly after = new Map<number, string[]>();
  /** `$set.messages` checkpoint lines being edited: their messages array, as it will be written. */
  private readonly checkpoints = new Map<
    number,
    { value: Record<string, unknown>; messages: (unknown | null)[]; added: Map<number, unknown[]> }
  >();

  constructor(
    private readonly lines: readonly string[],
    private readonly parsed: readonly unknown[],
  ) {}

  replace(place: Place, record: Record<string, unknown>): void {
    if (place.element === undefined) this.replaced.set(place.line, JSON.stringify(record));
    else this.checkpoint(place.line).messages[place.element] = record;
  }

  remove(place: Place): void {
    if (place.element === undefined) this.replaced.set(place.line, null);
    else this.checkpoint(place.line).messages[place.element] = null;
  }

  insertBefore(place: Place, record: Record<string, unknown>): void {
    if (place.element === undefined) push(this.before, place.line, JSON.stringify(record));
    else push(this.checkpoint(place.line).added, place.element, record);
  }

  insertAfter(place: Place, record: Record<string, unknown>): void {
    if (place.element === undefined) push(this.after, place.line, JSON.stringify(record));
    else push(this.checkpoint(place.line).added, place.element + 1, record);
  }

  text(): string {
    const out: string[] = [];
    this.lines.forEach((line, index) => {
      out.push(...(this.before.get(index) ?? []));
      const checkpoint = this.checkpoints.get(index);
      if (checkpoint !== undefined) {
        const messages: unknown[] = [];
        for (let at = 0; at <= checkpoint.messages.length; at += 1) {
          messages.push(...(checkpoint.added.get(at) ?? []));
          const message = checkpoint.messages[at];
          if (at < checkpoint.messages.length && message !== null) messages.push(message);
        }
        const set = checkpoint.value['$set'] as Record<string, unknown>;
        out.push(JSON.stringify({ ...checkpoint.value, $set: { ...set, messages } }));
      } else {
        const replacement = this.replaced.get(index);
        if (replacement === undefined) out.push(line);
        else if (replacement !== null) out.push(replacement);
      }
      out.push(...(this.after.get(index) ?? []));
    });
    return out.join('\n');
  }

  private checkpoint(line: number) {
    let checkpoint = this.checkpoints.get(line);
    if (checkpoint === undefined) {
      const value = this.parsed[line] as Record<string, unknown>;
      const set = value['$set'] as Record<string, unknown>;
      checkpoint = { value, messages: [...(set['messages'] as unknown[])], added: new Map() };
      this.checkpoints.set(line, checkpoint);
    }
    return checkpoint;
  }
}

function push<T>(map: Map<number, T[]>, key: number, value: T): void {
  const list = map.get(key) ?? [];
  list.push(value);
  map.set(key, list);
}
