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

const CHUNK_MESSAGES = 1000;

/** The journal's bytes a thousand messages at a time: a save never holds the whole text. */
function* inChunks(messages: readonly Message[]): Generator<Buffer> {
  for (let start = 0; start < messages.length; start += CHUNK_MESSAGES) {
    yield Buffer.from(formatJournal(messages.slice(start, start + CHUNK_MESSAGES)), 'utf8');
  }
}

const utf8 = new TextDecoder('utf-8');

/**
 * Reads a journal with one JSON.parse when it is undamaged: the file is read into a buffer with a
 * byte to spare at the front, `[` goes there, every line break becomes `,` and the last one `]`
 * (a raw line break never occurs inside JSON text). Anything irregular is read line by line.
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
  if (size > 0 && bytes[size - 1] === 0x0a && bytes.indexOf(0x0d) === -1) {
    const breaks: number[] = [];
    for (let index = bytes.indexOf(0x0a); index !== -1; index = bytes.indexOf(0x0a, index + 1)) breaks.push(index);
    let blank = false;
    for (let index = 1; index < breaks.length; index += 1) if (breaks[index]! === breaks[index - 1]! + 1) blank = true;
    if (!blank && breaks[0] !== 0) {
      buffer[0] = 0x5b; // [
      for (const index of breaks) bytes[index] = 0x2c; // ,
      bytes[size - 1] = 0x5d; // ]
      const values = tryParse(buffer.subarray(0, 1 + size));
      if (Array.isArray(values) && values.length === breaks.length && values.every(isMessage)) return { messages: values as Message[], problems: [] };
      for (const index of breaks) bytes[index] = 0x0a;
    }
  }
  const result = parseJournal(utf8.decode(bytes), { file: path });
  if (!isUtf8(bytes)) result.problems.push(...invalidUtf8Lines(bytes, path));
  return result;
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

function tryParse(bytes: Buffer): unknown {
  const text = utf8.decode(bytes);
  if (text.includes('\ufffd') && !isUtf8(bytes)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
