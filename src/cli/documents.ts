import { type Recognised, recogniseFormat } from '../core/detect-format.js';
import { UnstuckError } from '../core/errors.js';
import { fromAnthropicMessages } from '../core/formats/anthropic-messages.js';
import { type FormatName, formatNames, type NativeFormatName } from '../core/formats/format-types.js';
import { fromGeminiContents } from '../core/formats/gemini-contents.js';
import { fromResponsesInput } from '../core/formats/responses-input.js';
import { isMessage, type Message } from '../core/messages.js';
import {
  createTranscriptStore,
  formatJournal,
  formatTranscript,
  parseJournal,
  type SessionProblem,
} from '../session/index.js';
import type { Io } from './io.js';
import { findJsonErrorOffset, lineAndColumn } from './json-error-offset.js';
import { decodeInput, readInputBytes } from './read-input.js';
import { agentEvidence, agentNames, agentReaders, readAgentSession } from './sessions/agent-readers.js';
import type { AgentSession } from './sessions/agent-session.js';

/** The containers a history comes in. Written back in the same one. */
export type DocumentFormat = 'json-array' | 'request-body' | 'jsonl' | 'markdown' | 'agent-session';

export interface HistoryDocument {
  file: string;
  format: DocumentFormat;
  /** The wire format of the history inside (what check and repair are told). */
  wire: FormatName;
  /** The history as OpenAI-chat messages (converted, for another wire). */
  messages: Message[];
  /** The history as it is in the document, in its wire (for OpenAI chat, `messages` itself). */
  items: unknown[];
  /** For a request body: the key holding the history (messages, contents or input). */
  key?: string;
  /** What could not be read (damaged session files); empty for JSON documents, which either parse or are bad input. */
  problems: SessionProblem[];
  /** The original text, so an unchanged document is written back byte for byte. */
  text: string;
  /** The input's bytes as read (what a backup keeps). */
  bytes: Uint8Array;
  /** The input began with a UTF-8 byte order mark (not part of `text`): written back with one. */
  bom?: boolean;
  /** For a request body: the body, whose other fields are kept. */
  body?: Record<string, unknown>;
  /** Indentation the JSON used (0 = compact), so a repaired file diffs cleanly against the original. */
  indent: number;
  /** Another agent's session file (format 'agent-session'): read and written back by its reader (src/cli/sessions/). */
  agent?: AgentSession;
  /** What showed the document's format (docs/decisions/recognise-or-refuse.md), e.g. `[0] has role "user" and a content (openai-chat)`. */
  evidence?: string;
}

export interface ReadDocumentOptions {
  /** --agent: read FILE as this agent's session file, whatever its content looks like. */
  agent?: string;
  /** --format: read a JSON document's history as this wire format, whatever its elements look like. */
  format?: FormatName;
}

/** What unstuck reads, for the line that refuses a document it does not recognise. */
function readsLine(): string {
  return `unstuck reads OpenAI chat, Anthropic Messages, Gemini contents and Responses input (a JSON array, or a request body), its own .md and .jsonl sessions, and the session files of ${agentReaders.map((reader) => reader.label).join(', ')}; to read it as one anyway, pass --format ${formatNames.join('|')} or --agent ${agentNames.join('|')}`;
}

/** The one line for a document no recogniser took: never read as anything, never called valid. */
export function notRecognised(file: string, why: string): UnstuckError {
  return new UnstuckError('INPUT_INVALID', `not a history unstuck recognises (${why}); ${readsLine()}`, { file });
}

/** A chat-only container (.md, .jsonl) asked for another wire. */
function chatOnly(container: string, format: FormatName | undefined): void {
  if (format !== undefined && format !== 'openai-chat')
    throw new UnstuckError(
      'USAGE',
      `--format ${format}: a ${container} holds OpenAI chat messages; --format applies to JSON documents`,
    );
}

/** Reads FILE (or stdin for '-'), detecting its container. Bad input throws one UnstuckError naming the file and position. */
export async function readDocument(file: string, io: Io, options: ReadDocumentOptions = {}): Promise<HistoryDocument> {
  if (options.agent !== undefined && options.format !== undefined)
    throw new UnstuckError('USAGE', 'name --agent or --format, not both: an agent session file has its own wire');
  const bytes = await readInputBytes(file, io);
  if (/\.md$/i.test(file) && options.agent === undefined) {
    chatOnly('Markdown transcript', options.format);
    // Through the store, so a long session's declared segment files are read too (and nothing else).
    // Its markers carry the messages; the readable text is only printed back when nothing changed.
    const loaded = await createTranscriptStore(file).load();
    // Markdown without a message marker is not a transcript of ours (a README, notes): refused, not "damaged".
    if (loaded.messages.length === 0)
      throw notRecognised(
        file,
        `a .md file with no unstuck transcript message in it${loaded.problems[0] === undefined ? '' : `: ${loaded.problems[0].why}`}`,
      );
    return {
      file,
      format: 'markdown',
      wire: 'openai-chat',
      messages: loaded.messages,
      items: loaded.messages,
      problems: loaded.problems,
      text: bytes.toString('utf8'),
      bytes,
      indent: 0,
      evidence: `${loaded.messages.length} message(s) under unstuck transcript markers (markdown)`,
    };
  }
  const { text, bom } = decodeInput(bytes, file);
  const session = readAgentSession(file, text, options.agent);
  if (session !== undefined) {
    const document: HistoryDocument = {
      file,
      format: 'agent-session',
      wire: session.wire,
      items: session.native,
      messages:
        session.wire === 'openai-chat'
          ? (session.native as Message[])
          : converters[session.wire](session.native).messages,
      problems: session.problems,
      text,
      bytes,
      indent: 0,
      agent: session,
      evidence: options.agent === undefined ? agentEvidence(session.agent) : `--agent ${options.agent}`,
    };
    if (bom) document.bom = true;
    return document;
  }
  const document = { ...readJsonDocument(file, text, options.format), bytes };
  if (bom) document.bom = true;
  return document;
}

function readJsonDocument(file: string, text: string, format: FormatName | undefined): Omit<HistoryDocument, 'bytes'> {
  if (/\.jsonl$/i.test(file)) {
    chatOnly('JSONL journal', format);
    return fromJsonl(file, text);
  }
  const trimmed = text.trimStart();
  if (trimmed === '')
    throw new UnstuckError(
      'INPUT_INVALID',
      'empty input: expected a JSON array of messages, a request body with "messages", or JSONL',
      { file, position: '1:1' },
    );
  if (trimmed.startsWith('[')) {
    const value = parseJson(text, file);
    return historyDocument(
      { file, format: 'json-array', text, indent: detectIndent(text) },
      recognise(file, value, format),
      value,
    );
  }
  // An object: a request body, or the first line of JSONL.
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (text.trim().includes('\n')) return fromJsonl(file, text);
    throw jsonError(error, text, file);
  }
  // One message on one line is a journal of one message.
  if (isMessage(value) && (format === undefined || format === 'openai-chat')) {
    const journal = fromJsonl(file, text);
    if (journal.messages.length > 0) return journal;
  }
  const recognised = recognise(file, value, format);
  const body = value as Record<string, unknown>;
  const key = recognised.key as string;
  return historyDocument(
    { file, format: 'request-body', text, body, key, indent: detectIndent(text) },
    recognised,
    body[key],
  );
}

const BODY_KEYS: Record<FormatName, string> = {
  'openai-chat': 'messages',
  'anthropic-messages': 'messages',
  'gemini-contents': 'contents',
  'responses-input': 'input',
};

/** The wire of a JSON document: as --format names it, or recognised on its evidence; else refused (exit 2). */
function recognise(file: string, value: unknown, format: FormatName | undefined): Recognised {
  if (format === undefined) {
    const recognised = recogniseFormat(value);
    if (recognised.format === undefined) throw notRecognised(file, recognised.why);
    return recognised;
  }
  if (Array.isArray(value)) return { format, evidence: `--format ${format}` };
  const key = BODY_KEYS[format];
  if (value === null || typeof value !== 'object' || !Array.isArray((value as Record<string, unknown>)[key]))
    throw new UnstuckError(
      'INPUT_INVALID',
      `--format ${format}: expected a JSON array, or a request body with a "${key}" array`,
      {
        file,
        position: '1:1',
      },
    );
  return { format, evidence: `--format ${format}`, key };
}

/** What the elements of a history are called in its wire: messages, contents or input items. */
export function elementLabel(wire: string): string {
  return wire === 'gemini-contents' ? 'contents' : wire === 'responses-input' ? 'input' : 'messages';
}

const converters: Record<NativeFormatName, (history: readonly unknown[]) => { messages: Message[] }> = {
  'anthropic-messages': fromAnthropicMessages,
  'gemini-contents': fromGeminiContents,
  'responses-input': fromResponsesInput,
};

/**
 * The document of a history in the wire recognised (or forced). Forced to OpenAI chat, an element
 * that is not a message is still refused by name: the chat model cannot hold it.
 */
function historyDocument(
  base: Omit<HistoryDocument, 'wire' | 'messages' | 'items' | 'problems' | 'bytes'>,
  recognised: Recognised,
  history: unknown,
): Omit<HistoryDocument, 'bytes'> {
  const wire = recognised.format;
  const evidence = recognised.evidence;
  if (wire === 'openai-chat') {
    const messages = asMessages(history, base.file, base.key ?? '');
    return { ...base, wire, messages, items: messages, problems: [], evidence };
  }
  const items = history as unknown[];
  return { ...base, wire, items, messages: converters[wire](items).messages, problems: [], evidence };
}

/** The document with its history replaced (in the document's own wire: native elements for another wire than chat), in its own container. */
export function formatDocument(document: HistoryDocument, history: readonly unknown[]): string {
  const text = formatContainer(document, history);
  return document.bom === true ? `\uFEFF${text}` : text;
}

/** The document's original text, byte order mark included. */
export function originalText(document: HistoryDocument): string {
  return document.bom === true ? `\uFEFF${document.text}` : document.text;
}

function formatContainer(document: HistoryDocument, history: readonly unknown[]): string {
  switch (document.format) {
    case 'json-array':
      return `${JSON.stringify(history, null, document.indent || undefined)}\n`;
    case 'request-body':
      return `${JSON.stringify({ ...document.body, [document.key ?? 'messages']: history }, null, document.indent || undefined)}\n`;
    case 'jsonl':
      return formatJournal(history as readonly Message[]);
    case 'markdown':
      return formatTranscript(history as readonly Message[]);
    case 'agent-session':
      return (document.agent as AgentSession).write(history);
  }
}

function fromJsonl(file: string, text: string): Omit<HistoryDocument, 'bytes'> {
  const loaded = parseJournal(text, { file });
  if (loaded.messages.length === 0 && loaded.problems.length > 0) {
    const first = loaded.problems[0] as SessionProblem;
    throw new UnstuckError('INPUT_INVALID', `not a history: ${first.why}`, { file, position: String(first.line ?? 1) });
  }
  // An empty journal holds no message to check: refused, never "valid (0 messages)".
  if (loaded.messages.length === 0) throw notRecognised(file, 'a .jsonl file with no line in it');
  return {
    file,
    format: 'jsonl',
    wire: 'openai-chat',
    messages: loaded.messages,
    items: loaded.messages,
    problems: loaded.problems,
    text,
    indent: 0,
    evidence: `${loaded.messages.length} line(s) with a string role (unstuck journal, openai-chat)`,
  };
}

function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw jsonError(error, text, file);
  }
}

/** One line naming where the JSON breaks: V8 gives a position only for some errors, so find it ourselves. */
function jsonError(error: unknown, text: string, file: string): UnstuckError {
  const offset = findJsonErrorOffset(text);
  const position = offset >= 0 ? lineAndColumn(text, offset) : '';
  const reason = (error as Error).message
    .replace(/ in JSON at position \d+.*$/, '')
    .replace(/, (?:\.\.\.)?".*" is not valid JSON$/s, '');
  return new UnstuckError('INPUT_INVALID', `not valid JSON: ${reason}`, { file, position, cause: error });
}

function asMessages(value: unknown, file: string, path: string): Message[] {
  if (!Array.isArray(value))
    throw new UnstuckError('INPUT_INVALID', `${path || 'the document'} is not an array of messages`, { file });
  for (let index = 0; index < value.length; index += 1) {
    if (!isMessage(value[index])) {
      throw new UnstuckError(
        'INPUT_INVALID',
        `${path === '' ? '' : `${path}`}[${index}] is not a message (an object with a string "role")`,
        { file, position: `message ${index}` },
      );
    }
  }
  return value as Message[];
}

function detectIndent(text: string): number {
  const match = /^[[{]\r?\n([ \t]+)/.exec(text.trimStart());
  if (match === null) return 0;
  const indent = match[1] as string;
  return indent.includes('\t') ? 2 : indent.length;
}
