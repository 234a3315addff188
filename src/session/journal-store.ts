import { Buffer } from 'node:buffer';
import { open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Message } from '../core/messages.js';
import { isMessage } from '../core/messages.js';
import { removeLeftoverTemporaries, syncDirectory, writeFileAtomic } from './atomic-write.js';
import { formatJournal, parseJournal } from './journal-codec.js';
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
      lock = await acquireWriterLock(path, options.lockTimeoutMs === undefined ? {} : { timeoutMs: options.lockTimeoutMs });
      tailChecked = false;
    }
  }

  async function save(messages: readonly Message[]): Promise<void> {
    await ensureLock();
    await writeFileAtomic(path, Buffer.from(formatJournal(messages), 'utf8'));
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
      await handle.write(text);
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
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { messages: [], problems: [] };
      return { messages: [], problems: [{ file: path, why: `cannot read the file: ${(error as Error).message}` }] };
    }
    return parseJournal(text, { file: path });
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
