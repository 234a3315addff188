import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { openRegularFile } from './read-regular-file.js';

/**
 * A file's status is trusted to mean "unchanged" only when the status was already this old when it
 * was recorded: a later change then always gives a newer ctime, which no one can set by hand.
 * Younger records (a file just written, or read right after a change) are checked by content, so a
 * coarse clock can never let a change through (git's "racy clean" rule, with a generous margin).
 */
const RACY_MARGIN_MS = 2000;
const HASH_CHUNK = 1024 * 1024;

interface Entry {
  digest: string;
  size: number;
  /** Present only when the status was read together with the bytes and did not move meanwhile. */
  stat?: { dev: number; ino: number; size: number; mtimeMs: number; ctimeMs: number; recordedAt: number };
}

/**
 * What the model last saw of each file in this chat: the sha256 of the bytes it read or wrote.
 * `edit_file` and an overwriting `write_file` go ahead only when the file on disk still has those
 * bytes, so nothing the user, a command or another program changed meanwhile is overwritten unseen.
 * Keys are real paths (links inside the workspace resolved): one entry per file.
 */
export interface FileLedger {
  /** `bytes` are what the model now knows of the file at `path`; `stat` its status from the same moment, when known. */
  remember(path: string, bytes: Uint8Array, stat?: { stat: Stats; recordedAt: number }): void;
  /** Throws an error the model can act on unless `path` holds what the model last saw. `current`: its bytes, when the caller has read them. */
  assertUnchanged(path: string, name: string, current?: Uint8Array): Promise<void>;
}

export function createFileLedger(): FileLedger {
  const entries = new Map<string, Entry>();
  return {
    remember(path, bytes, status) {
      const entry: Entry = { digest: digestOf(bytes), size: bytes.byteLength };
      if (status !== undefined) {
        const { stat, recordedAt } = status;
        entry.stat = {
          dev: stat.dev,
          ino: stat.ino,
          size: stat.size,
          mtimeMs: stat.mtimeMs,
          ctimeMs: stat.ctimeMs,
          recordedAt,
        };
      }
      entries.set(path, entry);
    },
    async assertUnchanged(path, name, current) {
      const entry = entries.get(path);
      if (entry === undefined) throw notReadYet(name);
      if (current !== undefined) {
        if (current.byteLength !== entry.size || digestOf(current) !== entry.digest) throw modifiedSinceRead(name);
        return;
      }
      const now = await lstat(path).catch(() => undefined);
      // Gone, or no longer a file: the model's picture of it is out of date.
      if (now === undefined || !now.isFile() || now.size !== entry.size) throw modifiedSinceRead(name);
      const known = entry.stat;
      if (
        known !== undefined &&
        known.dev === now.dev &&
        known.ino === now.ino &&
        known.size === now.size &&
        known.mtimeMs === now.mtimeMs &&
        known.ctimeMs === now.ctimeMs &&
        Math.max(known.ctimeMs, known.mtimeMs) < known.recordedAt - RACY_MARGIN_MS
      ) {
        return;
      }
      if ((await digestOfFile(path, name)) !== entry.digest) throw modifiedSinceRead(name);
    },
  };
}

/** Claude Code's wording (anthropics/claude-code#3513), which models already know how to act on. */
export function notReadYet(name: string): Error {
  return new Error(`${name} has not been read yet in this session. Read it first with read_file before writing to it.`);
}

export function modifiedSinceRead(name: string): Error {
  return new Error(
    `${name} has been modified since it was last read, either by the user, by a command or by another program. Read it again with read_file before attempting to write it.`,
  );
}

function digestOf(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

async function digestOfFile(path: string, name: string): Promise<string> {
  const hash = createHash('sha256');
  const { handle } = await openRegularFile(path, name);
  try {
    const buffer = Buffer.allocUnsafe(HASH_CHUNK);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}
