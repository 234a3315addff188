import type { Stats } from 'node:fs';
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';

/** Flags that make opening a FIFO return at once (instead of waiting for a writer) and never follow a final link. */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0);

export interface RegularFile {
  bytes: Buffer;
  /** The file's status when it was opened. */
  stat: Stats;
  /** False when the file changed while it was read (its status differs before and after). */
  stable: boolean;
}

/**
 * Opens the regular file at `path` (already resolved: no final symbolic link) for reading. What is not
 * a regular file is refused without blocking: a FIFO with no writer would otherwise hang the turn,
 * a device could be read forever. The caller closes the handle.
 */
export async function openRegularFile(path: string, name: string): Promise<{ handle: FileHandle; stat: Stats }> {
  let handle: FileHandle;
  try {
    handle = await open(path, OPEN_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new Error(`${name} does not exist`);
    if (code === 'ELOOP') throw new Error(`${name} is a symbolic link that changed while it was opened`);
    throw error;
  }
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw new Error(`${name} is a directory (use list_directory)`);
    if (!stat.isFile())
      throw new Error(`${name} is not a regular file (${kindOf(stat)}); only regular files can be read`);
    return { handle, stat };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The bytes of the regular file at `path` (see `openRegularFile`); at most `maxBytes`, larger is an error naming `name`. */
export async function readRegularFile(path: string, name: string, maxBytes: number): Promise<RegularFile> {
  const { handle, stat } = await openRegularFile(path, name);
  try {
    if (stat.size > maxBytes) throw new Error(`${name} is ${stat.size} bytes, more than this tool reads (${maxBytes})`);
    // Read what is there, and one byte more to notice a file that grew past the limit meanwhile.
    const buffer = Buffer.allocUnsafe(Math.min(stat.size, maxBytes) + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) break;
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) throw new Error(`${name} is more than ${maxBytes} bytes, more than this tool reads`);
    const after = await handle.stat();
    const stable =
      after.size === stat.size &&
      after.mtimeMs === stat.mtimeMs &&
      after.ctimeMs === stat.ctimeMs &&
      length === stat.size;
    return { bytes: buffer.subarray(0, length), stat, stable };
  } finally {
    await handle.close();
  }
}

export function kindOf(stat: Stats): string {
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  if (stat.isSymbolicLink()) return 'a symbolic link';
  if (stat.isDirectory()) return 'a directory';
  return 'not a regular file';
}
