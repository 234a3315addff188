import { randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { open, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isUnstuckError, UnstuckError } from '../core/errors.js';

export interface WriteFileAtomicOptions {
  /** fsync the directory after the rename (default true). */
  syncDirectory?: boolean;
  /**
   * Permission bits of the new file, exactly (not reduced by the umask). Default: those of the
   * file being replaced, so a private (0600) file stays private; 0644 less the umask for a new one.
   */
  mode?: number;
}

/**
 * Replaces `path` with `data` so that a crash at any moment leaves the old file or the new one:
 * write a temporary file beside it, fsync it, rename it over the target (atomic on POSIX), then
 * fsync the directory so the rename itself is durable. `data` may come in chunks, so a large
 * file never has to be in memory whole.
 *
 * A symbolic link at `path` is replaced by the new file, never written through: the temporary
 * file is created exclusively (`O_EXCL`: an existing name, link or not, is never opened) and the
 * rename replaces the directory entry, whatever it pointed to. A failure is an `UnstuckError`
 * naming `path` (never the temporary file).
 */
export async function writeFileAtomic(
  path: string,
  data: Uint8Array | Iterable<Uint8Array>,
  options: WriteFileAtomicOptions = {},
): Promise<void> {
  const mode = options.mode ?? (await existingMode(path));
  const temporary = temporaryPath(path);
  let handle: FileHandle | undefined;
  try {
    // Private while it is written; given its mode once its content is whole.
    handle = await open(temporary, 'wx', mode === undefined ? 0o644 : 0o600);
  } catch (error) {
    throw writeError(path, error);
  }
  try {
    if (data instanceof Uint8Array) await handle.writeFile(data);
    else for (const chunk of data) await handle.writeFile(chunk);
    if (mode !== undefined) await handle.chmod(mode);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temporary, { force: true });
    throw writeError(path, error);
  }
  await handle.close();
  try {
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw writeError(path, error);
  }
  if (options.syncDirectory !== false) await syncDirectory(dirname(path));
}

/** Permission bits of the file at `path` (a link's target), or undefined if there is none. */
async function existingMode(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mode & 0o7777;
  } catch {
    return undefined;
  }
}

const WRITE_FAILURES: Record<string, string> = {
  ENOENT: 'its directory does not exist',
  ENOTDIR: 'a part of its directory path is not a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'the file system is read-only',
  EISDIR: 'it is a directory',
  EIO: 'input/output error',
};

/** A failed write as one line naming the real path: the temporary file's name means nothing to the reader. */
function writeError(path: string, error: unknown): unknown {
  if (isUnstuckError(error)) return error;
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    (code === undefined ? undefined : WRITE_FAILURES[code]) ??
    (error as Error).message.replaceAll(/'[^']*\.tmp-\d+-[0-9a-f]{8}'/g, 'the temporary file');
  return new UnstuckError('IO', `cannot write: ${why}${code === undefined ? '' : ` (${code})`}`, {
    file: path,
    cause: error,
  });
}

/**
 * Makes the directory's entries (creations, renames, removals) durable. Platforms that cannot
 * open or fsync a directory (Windows: EISDIR/EPERM) make renames durable on their own terms.
 */
export async function syncDirectory(directory: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(directory, 'r');
  } catch (error) {
    if (isUnsupported(error)) return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    if (!isUnsupported(error)) throw error;
  } finally {
    await handle.close();
  }
}

function isUnsupported(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'EISDIR' || code === 'EPERM' || code === 'EINVAL' || code === 'EBADF';
}

/** `.NAME.tmp-PID-RANDOM`: hidden, never matched by a reader, recognizably ours for cleanup. */
function temporaryPath(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
}

/**
 * Removes temporary files left beside `path` by writers that crashed. Call it only while holding
 * the writer lock: then no other writer can be in the middle of one.
 */
export async function removeLeftoverTemporaries(path: string, names?: readonly string[]): Promise<void> {
  const directory = dirname(path);
  const prefix = `.${basename(path).replace(/\.md$/, '')}`;
  const entries = names ?? (await readdir(directory).catch(() => [] as string[]));
  for (const name of entries) {
    if (name.startsWith(prefix) && /\.tmp-\d+-[0-9a-f]{8}$/.test(name))
      await rm(join(directory, name), { force: true }).catch(() => undefined);
  }
}
