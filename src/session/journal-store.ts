import { Buffer, isUtf8 } from 'node:buffer';
import { open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Message } from '../core/messages.js';
import { isMessage } from '../core/messages.js';
import { removeLeftoverTemporaries, syncDirectory, writeFileAtomic } from './atomic-write.js';
import { formatJournal, parseJournal } from './journal-codec.js';
import { asSaveError } from './save-error.js';
import { createSerial } from './serial.js';
import type { JournalStoreOptions, LoadResult, SessionProblem, SessionStore } from './types.js';
import type { WriterLock } from './writer-lock.js';
import { acquireWriterLock } from './writer-lock.js';
import { decodeUtf8 } from './utf8.js';
import { encodeMessages } from './message-json.js';

/**
 * A session kept as a JSONL journal (see journal-codec.ts). `append` adds lines and fsyncs them,
 * which is what an agent does after every message; `save` replaces the whole file atomically
 * (after a repair, or a compaction that shortens the history).
 */
export function createJournalStore(path: string, options: JournalStoreOptions = {}): SessionStore {
  const serial = createSerial();
  let lock: WriterLock | undefined;
  let tailChecked = false;

  async function ensureLock(): Promise<void> {
    if (lock === undefined) {
      lock = await acquireWriterLock(path, options.lockTimeoutMs === undefined ? {} : { timeoutMs: options.lockTimeoutMs });
      tailChecked = false;
    }
  }

  async function save(messages: readonly Message[]): Promise<void> {
    await ensureLock();
    await writeFileAtomic(path, inChunks(messages));
    tailChecked = true;
    await removeLeftoverTemporaries(path).catch(() => undefined);
  }

  async function append(messages: readonly Message[]): Promise<void> {
    await ensureLock();
    const text = formatJournal(messages);
    if (!tailChecked) await mendTail();
    if (text === '') return;
    const handle = await open(path, 'a', 0o644);
    const created = (await handle.stat()).size === 0;
    try {
      await handle.writeFile(text); // loops until all is written, unlike write()
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (created) await syncDirectory(dirname(path));
  }

  /**
   * Before the first append, the file must end at a line boundary. A last line without its
   * newline is either a whole message whose newline was lost (keep it: add the newline) or an
   * append that died midway, which was never acknowledged (cut it off, as write-ahead logs do;
   * `load` already reported it). Otherwise the next line would be glued to it.
   */
  async function mendTail(): Promise<void> {
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch {
      tailChecked = true;
      return;
    }
    if (bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a) {
      const cut = bytes.lastIndexOf(0x0a) + 1;
      const handle = await open(path, 'r+');
      try {
        let whole = false;
        try {
          whole = isMessage(JSON.parse(bytes.subarray(cut).toString('utf8')));
        } catch {
          whole = false;
        }
        if (whole) await handle.write('\n', bytes.length);
        else await handle.truncate(cut);
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
    tailChecked = true;
  }

  async function load(): Promise<LoadResult> {
    try {
      return await parseJournalFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { messages: [], problems: [] };
      return { messages: [], problems: [{ file: path, why: `cannot read the file: ${(error as Error).message}` }] };
    }
  }

  return {
    load: () => serial(load),
    save: (messages) => serial(() => save(messages).catch((error: unknown) => Promise.reject(asSaveError(path, error)))),
    append: (messages) => serial(() => append(messages).catch((error: unknown) => Promise.reject(asSaveError(path, error)))),
    close: () => serial(async () => {
      const held = lock;
      lock = undefined;
      await held?.release();
    }),
  };
}

const CHUNK_MESSAGES = 1024;

/** The journal's bytes a thousand messages at a time: a save never holds the whole text. */
function* inChunks(messages: readonly Message[]): Generator<Buffer> {
  for (let start = 0; start < messages.length; start += CHUNK_MESSAGES) {
    // `m1,m2,…,mn,` with each message's closing comma turned into its line break.
    const { bytes, ends } = encodeMessages(messages.slice(start, start + CHUNK_MESSAGES), start + 1);
    for (const end of ends) bytes[end] = 0x0a;
    yield bytes;
  }
}

/** Lines parsed by one JSON.parse: large enough to amortize the call, small enough for the young heap. */
const PARSE_LINES = 4096;

/**
 * Reads a journal with one JSON.parse per few thousand lines when it is undamaged: the file is
 * read into a buffer with a byte to spare at the front; for each group of lines, the byte before
 * it becomes `[`, its line breaks `,` and its last one `]` (a raw line break never occurs inside
 * JSON text), and the bytes are put back after. Anything irregular is read line by line.
 */
async function parseJournalFile(path: string): Promise<LoadResult> {
  const handle = await open(path, 'r');
  let buffer: Buffer;
  let size: number;
  try {
    size = (await handle.stat()).size;
    buffer = Buffer.allocUnsafe(size + 1);
    let read = 0;
    while (read < size) {
      const { bytesRead } = await handle.read(buffer, 1 + read, size - read, read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    size = read;
  } finally {
    await handle.close();
  }
  const bytes = buffer.subarray(1, 1 + size);
  const whole = size > 0 && bytes[size - 1] === 0x0a && bytes[0] !== 0x0a && bytes.indexOf(0x0d) === -1 && bytes.indexOf('\n\n') === -1 ? parseGroups(buffer, size) : undefined;
  if (whole !== undefined) return { messages: whole, problems: [] };
  const text = decodeUtf8(bytes);
  const result = parseJournal(text ?? bytes.toString('utf8'), { file: path });
  if (text === undefined) result.problems.push(...invalidUtf8Lines(bytes, path));
  return result;
}

/** `buffer` is a spare byte and then `size` bytes of whole lines; the messages, or undefined if any line is not one. */
function parseGroups(buffer: Buffer, size: number): Message[] | undefined {
  const messages: Message[] = [];
  let start = 1; // first byte of the group, in `buffer`
  while (start <= size) {
    const breaks: number[] = [];
    for (let index = buffer.indexOf(0x0a, start); index !== -1 && breaks.length < PARSE_LINES; index = buffer.indexOf(0x0a, index + 1)) breaks.push(index);
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
    for (const value of values as Message[]) messages.push(value);
    start = last + 1;
  }
  return messages;
}

/** Lines whose bytes are not UTF-8: they loaded with U+FFFD in place of those bytes, and say so. */
function invalidUtf8Lines(bytes: Buffer, file: string): SessionProblem[] {
  const problems: SessionProblem[] = [];
  let start = 0;
  for (let line = 1; start < bytes.length; line += 1) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.length;
    if (!isUtf8(bytes.subarray(start, end))) problems.push({ file, line, why: 'line is not valid UTF-8: the bytes that are not were read as U+FFFD' });
    start = end + 1;
  }
  return problems;
}
