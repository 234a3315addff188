/** Reads a JSONL journal file (format: journal-codec.ts) a piece at a time. */
import { Buffer, isUtf8 } from 'node:buffer';
import { open } from 'node:fs/promises';
import type { Message } from '../core/messages.js';
import { isMessage } from '../core/messages.js';
import { parseJournalLines } from './journal-codec.js';
import type { LoadResult, SessionProblem } from './types.js';
import { decodeUtf8 } from './utf8.js';

/**
 * Bytes read at a time: the file is never in memory whole, and a piece is one or two JSON.parse
 * calls. Under 1 MB on purpose: Node makes a decoded string of about 1 MB or more an external
 * string, which the GC reclaims late (its memory is outside the heap that triggers collection):
 * at 2 MiB a load of a 19 MB journal peaked at 101-104 MB of RSS, at 256 KiB-1 MiB at 65-73 MB.
 */
const CHUNK_BYTES = 512 * 1024;

/**
 * Bytes parsed by one JSON.parse (at least one line): enough lines to amortize the call, few enough
 * that the decoded text stays a regular object in V8's young heap (under 128 KB). Decoding and
 * parsing 1.9 MB as 32 KiB groups took 6.9 ms against 8.4 ms as groups of 4,096 lines (about 2 MB).
 */
const GROUP_BYTES = 32 * 1024;

/**
 * Reads a journal in pieces of about `chunkBytes` (default 512 KiB), each cut after its last line
 * break, so memory holds the messages read so far and one piece, not the file. A piece is read
 * with one JSON.parse per 32 KiB of lines when it is regular: the byte before a group of lines
 * becomes `[`, its line breaks `,` and its last one `]` (a raw line break never occurs inside JSON
 * text), and the bytes are put back after. Anything irregular is read line by line, numbered from
 * the start of the file, exactly as parseJournal reads the whole text; the line left after the
 * last line break is the file's last line, cut short if it does not parse.
 */
export async function readJournalFile(
  path: string,
  options: { chunkBytes?: number; groupBytes?: number } = {},
): Promise<LoadResult> {
  const chunkBytes = Math.max(1, Math.floor(options.chunkBytes ?? CHUNK_BYTES));
  const groupBytes = Math.max(1, Math.floor(options.groupBytes ?? GROUP_BYTES));
  const result: LoadResult = { messages: [], problems: [] };
  const notUtf8: SessionProblem[] = [];
  let line = 1; // number of the first line in the next piece
  const handle = await open(path, 'r');
  try {
    // What was there when the read began: appends racing the read are the next load's.
    const size = (await handle.stat()).size;
    let position = 0;
    // One buffer for the whole read: a spare byte in front (for `[`), the bytes carried over from
    // the last piece (the start of a line that continues), then new ones. A line longer than the
    // buffer doubles it.
    let buffer = Buffer.allocUnsafe(1 + Math.min(chunkBytes, size));
    let carried = 0;
    while (position < size) {
      if (1 + carried === buffer.length) {
        const larger = Buffer.allocUnsafe(1 + Math.min(2 * carried, size));
        buffer.copy(larger, 1, 1, 1 + carried);
        buffer = larger;
      }
      let filled = 1 + carried;
      const limit = Math.min(buffer.length, filled + size - position);
      while (filled < limit) {
        const { bytesRead } = await handle.read(buffer, filled, limit - filled, position);
        if (bytesRead === 0) break;
        filled += bytesRead;
        position += bytesRead;
      }
      if (filled < limit) position = size; // the file shrank while we read: stop at what there is
      const end = buffer.subarray(1, filled).lastIndexOf(0x0a) + 1;
      if (end > 0) line += readPiece(buffer.subarray(0, 1 + end), path, line, groupBytes, result, notUtf8);
      carried = filled - 1 - end;
      buffer.copyWithin(1, 1 + end, filled);
    }
    if (carried > 0) readLines(buffer.subarray(1, 1 + carried), path, line, true, result, notUtf8);
  } finally {
    await handle.close();
  }
  for (const problem of notUtf8) result.problems.push(problem);
  return result;
}

/**
 * Reads `buffer`: a spare byte, then whole lines (the last ends with its line break). Returns the
 * number of lines read. Problems about UTF-8 go to `notUtf8`, listed after the others (as before
 * the journal was read in pieces).
 */
function readPiece(
  buffer: Buffer,
  file: string,
  firstLine: number,
  groupBytes: number,
  into: LoadResult,
  notUtf8: SessionProblem[],
): number {
  const bytes = buffer.subarray(1);
  const regular = bytes[0] !== 0x0a && bytes.indexOf(0x0d) === -1 && bytes.indexOf('\n\n') === -1;
  if (regular) {
    const lines = readGroups(buffer, groupBytes, into.messages);
    if (lines !== undefined) return lines;
  }
  return readLines(bytes, file, firstLine, false, into, notUtf8);
}

/** Reads `bytes` line by line (parseJournal's rules), numbering from `firstLine`. */
function readLines(
  bytes: Buffer,
  file: string,
  firstLine: number,
  last: boolean,
  into: LoadResult,
  notUtf8: SessionProblem[],
): number {
  const text = decodeUtf8(bytes);
  const lines = parseJournalLines(text ?? bytes.toString('utf8'), { file, firstLine, last }, into);
  if (text === undefined) notUtf8.push(...invalidUtf8Lines(bytes, file, firstLine));
  return lines;
}

/**
 * `buffer` is a spare byte and then whole lines, each ending with its line break: adds their
 * messages to `messages` and returns how many lines there were, or undefined (adding none) if any
 * line is not one message. Lines are parsed in groups of about `groupBytes` (at least one line).
 */
function readGroups(buffer: Buffer, groupBytes: number, messages: Message[]): number | undefined {
  const read: Message[] = [];
  const size = buffer.length - 1;
  let lines = 0;
  let start = 1; // first byte of the group, in `buffer`
  while (start <= size) {
    const breaks: number[] = [];
    const limit = start + groupBytes;
    for (
      let index = buffer.indexOf(0x0a, start);
      index !== -1 && (index < limit || breaks.length === 0);
      index = buffer.indexOf(0x0a, index + 1)
    )
      breaks.push(index);
    const last = breaks[breaks.length - 1]!;
    const before = buffer[start - 1]!;
    buffer[start - 1] = 0x5b; // [
    for (const index of breaks) buffer[index] = 0x2c; // ,
    buffer[last] = 0x5d; // ]
    const json = decodeUtf8(buffer.subarray(start - 1, last + 1));
    let values: unknown;
    try {
      values = json === undefined ? undefined : JSON.parse(json);
    } catch {
      values = undefined;
    }
    buffer[start - 1] = before;
    for (const index of breaks) buffer[index] = 0x0a;
    if (!Array.isArray(values) || values.length !== breaks.length || !values.every(isMessage)) return undefined;
    for (const value of values as Message[]) read.push(value);
    lines += breaks.length;
    start = last + 1;
  }
  for (const message of read) messages.push(message);
  return lines;
}

/** Lines whose bytes are not UTF-8: they loaded with U+FFFD in place of those bytes, and say so. */
function invalidUtf8Lines(bytes: Buffer, file: string, firstLine: number): SessionProblem[] {
  const problems: SessionProblem[] = [];
  let start = 0;
  for (let line = firstLine; start < bytes.length; line += 1) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.length;
    if (!isUtf8(bytes.subarray(start, end)))
      problems.push({ file, line, why: 'line is not valid UTF-8: the bytes that are not were read as U+FFFD' });
    start = end + 1;
  }
  return problems;
}
