import { Buffer } from 'node:buffer';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Message } from '../core/messages.js';
import { isMessage } from '../core/messages.js';
import { removeLeftoverTemporaries, syncDirectory, writeFileAtomic } from './atomic-write.js';
import { formatJournal } from './journal-codec.js';
import { readJournalFile } from './journal-reader.js';
import { encodeMessages } from './message-json.js';
import { asSaveError } from './save-error.js';
import { createSerial } from './serial.js';
import type { JournalStoreOptions, LoadResult, SessionStore } from './types.js';
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
      lock =
        options.lock ??
        (await acquireWriterLock(
          path,
          options.lockTimeoutMs === undefined ? {} : { timeoutMs: options.lockTimeoutMs },
        ));
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
    let handle: FileHandle | undefined;
    try {
      handle = await open(path, 'r+');
    } catch {
      tailChecked = true;
      return;
    }
    try {
      const tail = await readLastLine(handle);
      if (tail !== undefined) {
        let whole = false;
        try {
          whole = isMessage(JSON.parse(tail.bytes.toString('utf8')));
        } catch {
          whole = false;
        }
        if (whole) await handle.write('\n', tail.start + tail.bytes.length);
        else await handle.truncate(tail.start);
        await handle.sync();
      }
    } finally {
      await handle.close();
    }
    tailChecked = true;
  }

  async function load(): Promise<LoadResult> {
    try {
      return await readJournalFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { messages: [], problems: [] };
      return { messages: [], problems: [{ file: path, why: `cannot read the file: ${(error as Error).message}` }] };
    }
  }

  return {
    load: () => serial(load),
    save: (messages) =>
      serial(() => save(messages).catch((error: unknown) => Promise.reject(asSaveError(path, error)))),
    append: (messages) =>
      serial(() => append(messages).catch((error: unknown) => Promise.reject(asSaveError(path, error)))),
    close: () =>
      serial(async () => {
        const held = lock;
        lock = undefined;
        if (held !== options.lock) await held?.release();
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

/** Bytes read at a time when looking for the start of the last line. */
const TAIL_BYTES = 64 * 1024;

/**
 * The file's last line when it does not end with a line break (its bytes, and where it starts),
 * read backwards from the end: the file before it is not read.
 */
async function readLastLine(handle: FileHandle): Promise<{ start: number; bytes: Buffer } | undefined> {
  const size = (await handle.stat()).size;
  const pieces: Buffer[] = [];
  let start = size;
  while (start > 0) {
    const length = Math.min(TAIL_BYTES, start);
    const piece = Buffer.allocUnsafe(length);
    if ((await handle.read(piece, 0, length, start - length)).bytesRead !== length) return undefined; // cut while we read: nothing to mend
    if (start === size && piece[length - 1] === 0x0a) return undefined;
    start -= length;
    const lineBreak = piece.lastIndexOf(0x0a);
    if (lineBreak !== -1) {
      pieces.unshift(piece.subarray(lineBreak + 1));
      return { start: start + lineBreak + 1, bytes: Buffer.concat(pieces) };
    }
    pieces.unshift(piece);
  }
  return size === 0 ? undefined : { start, bytes: Buffer.concat(pieces) };
}
