import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';

/** A config file (or a file shown in a preview) is small; anything larger is not read. */
const MAX_CONFIG_BYTES = 1024 * 1024;

export type SmallFile =
  | { kind: 'missing' }
  | { kind: 'unreadable'; reason: string }
  | { kind: 'text'; bytes: Buffer; text: string };

/**
 * The bytes of a small file, read once (a config's digest and settings come from the same bytes).
 * Opened non-blocking and refused unless it is a regular file: a FIFO planted in the project must
 * not hang the start.
 */
export async function readSmallFile(path: string): Promise<SmallFile> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR'
      ? { kind: 'missing' }
      : { kind: 'unreadable', reason: code ?? 'error' };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { kind: 'unreadable', reason: 'not a regular file' };
    if (info.size > MAX_CONFIG_BYTES) return { kind: 'unreadable', reason: `larger than ${MAX_CONFIG_BYTES} bytes` };
    const bytes = await handle.readFile();
    return { kind: 'text', bytes, text: bytes.toString('utf8') };
  } catch (error) {
    return { kind: 'unreadable', reason: (error as NodeJS.ErrnoException).code ?? 'error' };
  } finally {
    await handle.close();
  }
}
