import { detectFormat } from '../core/detect-format.js';
import { UnstuckError } from '../core/errors.js';
import { fromAnthropicMessages } from '../core/formats/anthropic-messages.js';
import type { FormatName, NativeFormatName } from '../core/formats/format-types.js';
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
import { readAgentSession } from './sessions/agent-readers.js';
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
}

export interface ReadDocumentOptions {
  /** --agent: read FILE as this agent's session file, whatever its content looks like. */
  agent?: string;
}

/** Reads FILE (or stdin for '-'), detecting its container. Bad input throws one UnstuckError naming the file and position. */
export async function readDocument(file: string, io: Io, options: ReadDocumentOptions = {}): Promise<HistoryDocument> {
  const bytes = await readInputBytes(file, io);
  if (/\.md$/i.test(file) && options.agent === undefined) {
    // Through the store, so a long session's declared segment files are read too (and nothing else).
    // Its markers carry the messages; the readable text is only printed back when nothing changed.
    const loaded = await createTranscriptStore(file).load();
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
    };
    if (bom) document.bom = true;
    return document;
  }
  const document = { ...readJsonDocument(file, text), bytes };
  if (bom) document.bom = true;
  return document;
}

function readJsonDocument(file: string, text: string): Omit<HistoryDocument, 'bytes'> {
  if (/\.jsonl$/i.test(file)) return fromJsonl(file, text);
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
      detectFormat(value),
      value,
      '',
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
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const body = value as Record<string, unknown>;
    const key = Array.isArray(body['messages'])
      ? 'messages'
      : Array.isArray(body['contents'])
        ? 'contents'
        : Array.isArray(body['input'])
          ? 'input'
          : undefined;
    if (key !== undefined) {
      const base = { file, format: 'request-body' as const, text, body, key, indent: detectIndent(text) };
      return historyDocument(base, detectFormat(body), body[key], 'messages');
    }
  }
  if (isMessage(value)) return fromJsonl(file, text);
  throw new UnstuckError(
    'INPUT_INVALID',
    'expected a JSON array of messages, a request body with a "messages", "contents" or "input" array, or JSONL with one message a line',
    { file, position: '1:1' },
  );
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
 * The document of a history in the wire detectFormat named; where it could not tell (an empty
 * array, elements that are no wire's), OpenAI chat, whose reading then names what is not a message.
 */
function historyDocument(
  base: Omit<HistoryDocument, 'wire' | 'messages' | 'items' | 'problems' | 'bytes'>,
  detected: FormatName | undefined,
  history: unknown,
  path: string,
): Omit<HistoryDocument, 'bytes'> {
  const wire = detected ?? 'openai-chat';
  if (wire === 'openai-chat') {
    const messages = asMessages(history, base.file, path);
    return { ...base, wire, messages, items: messages, problems: [] };
  }
  const items = history as unknown[];
  return { ...base, wire, items, messages: converters[wire](items).messages, problems: [] };
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
  return {
    file,
    format: 'jsonl',
    wire: 'openai-chat',
    messages: loaded.messages,
    items: loaded.messages,
    problems: loaded.problems,
    text,
    indent: 0,
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
