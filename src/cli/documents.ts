import { readFile } from 'node:fs/promises';
import { Buffer } from 'node:buffer';
import { UnstuckError } from '../core/errors.js';
import { isMessage, type Message } from '../core/messages.js';
import { parseJournal, formatJournal } from '../session/journal-codec.js';
import { formatTranscript } from '../session/transcript-codec.js';
import { createTranscriptStore } from '../session/transcript-store.js';
import type { SessionProblem } from '../session/types.js';
import type { Io } from './io.js';
import { findJsonErrorOffset, lineAndColumn } from './json-error-offset.js';

/** The containers a history comes in. Written back in the same one. */
export type DocumentFormat = 'json-array' | 'request-body' | 'jsonl' | 'markdown';

export interface HistoryDocument {
  file: string;
  format: DocumentFormat;
  messages: Message[];
  /** What could not be read (damaged session files); empty for JSON documents, which either parse or are bad input. */
  problems: SessionProblem[];
  /** The original text, so an unchanged document is written back byte for byte. */
  text: string;
  /** For a request body: the body, whose other fields are kept. */
  body?: Record<string, unknown>;
  /** Indentation the JSON used (0 = compact), so a repaired file diffs cleanly against the original. */
  indent: number;
}

/** Reads FILE (or stdin for '-'), detecting its container. Bad input throws one UnstuckError naming the file and position. */
export async function readDocument(file: string, io: Io): Promise<HistoryDocument> {
  let text: string;
  try {
    text = file === '-' ? await readStdin(io) : await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
    throw new UnstuckError('IO', `cannot read: ${why}`, { file, cause: error });
  }
  if (/\.md$/i.test(file)) {
    // Through the store, so a long session's declared segment files are read too (and nothing else).
    const loaded = await createTranscriptStore(file).load();
    return { file, format: 'markdown', messages: loaded.messages, problems: loaded.problems, text, indent: 0 };
  }
  if (/\.jsonl$/i.test(file)) return fromJsonl(file, text);
  const trimmed = text.trimStart();
  if (trimmed === '') throw new UnstuckError('INPUT_INVALID', 'empty input: expected a JSON array of messages, a request body with "messages", or JSONL', { file, position: '1:1' });
  if (trimmed.startsWith('[')) {
    const value = parseJson(text, file);
    return { file, format: 'json-array', messages: asMessages(value, file, ''), problems: [], text, indent: detectIndent(text) };
  }
  // An object: a request body, or the first line of JSONL.
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (text.trim().includes('\n')) return fromJsonl(file, text);
    throw jsonError(error, text, file);
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && Array.isArray((value as Record<string, unknown>)['messages'])) {
    const body = value as Record<string, unknown>;
    return { file, format: 'request-body', messages: asMessages(body['messages'], file, 'messages'), problems: [], text, body, indent: detectIndent(text) };
  }
  if (isMessage(value)) return fromJsonl(file, text);
  throw new UnstuckError('INPUT_INVALID', 'expected a JSON array of messages, a request body with a "messages" array, or JSONL with one message a line', { file, position: '1:1' });
}

/** The document with its messages replaced, in its own container. */
export function formatDocument(document: HistoryDocument, messages: readonly Message[]): string {
  switch (document.format) {
    case 'json-array':
      return `${JSON.stringify(messages, null, document.indent || undefined)}\n`;
    case 'request-body':
      return `${JSON.stringify({ ...document.body, messages }, null, document.indent || undefined)}\n`;
    case 'jsonl':
      return formatJournal(messages);
    case 'markdown':
      return formatTranscript(messages);
  }
}

function fromJsonl(file: string, text: string): HistoryDocument {
  const loaded = parseJournal(text, { file });
  if (loaded.messages.length === 0 && loaded.problems.length > 0) {
    const first = loaded.problems[0] as SessionProblem;
    throw new UnstuckError('INPUT_INVALID', `not a history: ${first.why}`, { file, position: String(first.line ?? 1) });
  }
  return { file, format: 'jsonl', messages: loaded.messages, problems: loaded.problems, text, indent: 0 };
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
  const reason = (error as Error).message.replace(/ in JSON at position \d+.*$/, '').replace(/, (?:\.\.\.)?".*" is not valid JSON$/s, '');
  return new UnstuckError('INPUT_INVALID', `not valid JSON: ${reason}`, { file, position, cause: error });
}

function asMessages(value: unknown, file: string, path: string): Message[] {
  if (!Array.isArray(value)) throw new UnstuckError('INPUT_INVALID', `${path || 'the document'} is not an array of messages`, { file });
  for (let index = 0; index < value.length; index += 1) {
    if (!isMessage(value[index])) {
      throw new UnstuckError('INPUT_INVALID', `${path === '' ? '' : `${path}`}[${index}] is not a message (an object with a string "role")`, { file, position: `message ${index}` });
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

async function readStdin(io: Io): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
