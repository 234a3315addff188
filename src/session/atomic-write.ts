import { randomBytes } from 'node:crypto';
import { open, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Replaces `path` with `data` so that a crash at any moment leaves the old file or the new one:
 * write a temporary file beside it, fsync it, rename it over the target (atomic on POSIX), then
 * fsync the directory so the rename itself is durable. `data` may come in chunks, so a large
 * file never has to be in memory whole.
 */
export async function writeFileAtomic(path: string, data: Uint8Array | Iterable<Uint8Array>, options: { syncDirectory?: boolean } = {}): Promise<void> {
  const temporary = temporaryPath(path);
  const handle = await open(temporary, 'wx', 0o644);
  try {
    if (data instanceof Uint8Array) await handle.writeFile(data);
    else for (const chunk of data) await handle.writeFile(chunk);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temporary, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  if (options.syncDirectory !== false) await syncDirectory(dirname(path));
}

/**
 * Makes the directory's entries (creations, renames, removals) durable. Platforms that cannot
 * open or fsync a directory (Windows: EISDIR/EPERM) make renames durable on their own terms.
 */
export async function syncDirectory(directory: string): Promise<void> {
  let handle;
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
    if (name.startsWith(prefix) && /\.tmp-\d+-[0-9a-f]{8}$/.test(name)) await rm(join(directory, name), { force: true }).catch(() => undefined);
  }
}
