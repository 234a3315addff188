import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { constants } from 'node:fs';
import { access, lstat, open, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { kindOf } from './read-regular-file.js';

/** Create only, never through a link: a link planted at the temporary name cannot redirect the write. */
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);
const TEMPORARY = /^\.(.+)\.unstuck-(\d+)-[0-9a-f]{8}\.tmp$/;

/**
 * Replaces the user's file at `path` (a real path: links already resolved and confined to the
 * workspace) with `data`, so that a crash, a kill or a full disk at any moment leaves the old file
 * or the new one, never a mix or a prefix: a temporary file beside it (same directory, so the same
 * file system), fsync, rename over the target, fsync the directory. The file keeps its permission
 * bits (and its owner and group where the process may set them); a new file gets the usual
 * 0666 less umask. Once `signal` is aborted the rename is not made (the file stays as it was). Refuses a target that is not a regular file (a directory, a FIFO, a device, a
 * symbolic link that appeared meanwhile) or that this process may not write, and never follows a link.
 *
 * Not the session's `writeFileAtomic`: that one writes unstuck's own files (no regular-file or
 * workspace checks, its own cleanup under the writer lock); see docs/decisions/chat-tools-file-safety.md.
 */
export async function replaceFileAtomically(
  path: string,
  data: Uint8Array,
  name: string,
  signal?: AbortSignal,
): Promise<Stats> {
  const existing = await regularOrAbsent(path, name);
  const temporary = join(
    dirname(path),
    `.${basename(path)}.unstuck-${process.pid}-${randomBytes(4).toString('hex')}.tmp`,
  );
  // An existing file's mode is set before a byte is written, so a private file is never readable by others meanwhile.
  const handle = await open(temporary, CREATE_FLAGS, existing === undefined ? 0o666 : 0o600);
  try {
    try {
      if (existing !== undefined) {
        await handle.chmod(existing.mode & 0o777);
        if (existing.uid !== process.getuid?.() || existing.gid !== process.getgid?.())
          await handle.chown(existing.uid, existing.gid).catch(() => undefined);
      }
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    // A turn aborted while the bytes were written: the model is told the call was cancelled, so the
    // file must stay as it was (the rename is the only step that changes it).
    if (signal?.aborted === true)
      throw new Error(`the write of ${name} was stopped: the turn was aborted; the file is unchanged`);
    // Checked again at the last moment: what was a file may have been replaced by something else.
    await regularOrAbsent(path, name);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dirname(path));
  const written = await lstat(path);
  await removeTemporariesOfDeadWriters(path);
  return written;
}

async function regularOrAbsent(path: string, name: string): Promise<Stats | undefined> {
  let stat: Stats;
  try {
    stat = await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (stat.isDirectory()) throw new Error(`${name} is a directory`);
  if (!stat.isFile()) throw new Error(`${name} is ${kindOf(stat)}, not a regular file; only regular files are written`);
  // A rename would replace a read-only file as easily as any other: refuse it, as writing in place would.
  if (
    !(await access(path, constants.W_OK).then(
      () => true,
      () => false,
    ))
  )
    throw new Error(
      `${name} is read-only (mode ${(stat.mode & 0o777).toString(8).padStart(4, '0')}); it is not written`,
    );
  return stat;
}

/** Makes the rename durable. Platforms that cannot fsync a directory (Windows) make it durable on their own terms. */
async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r').catch(() => undefined);
  if (handle === undefined) return;
  try {
    await handle.sync().catch(() => undefined);
  } finally {
    await handle.close();
  }
}

/**
 * A writer killed between creating its temporary file and the rename leaves it behind. The next
 * write of the same file removes such leftovers, but only of processes that no longer exist: a
 * live writer's file is never touched.
 */
async function removeTemporariesOfDeadWriters(path: string): Promise<void> {
  const directory = dirname(path);
  const names = await readdir(directory).catch(() => [] as string[]);
  for (const entry of names) {
    const match = TEMPORARY.exec(entry);
    if (match === null || match[1] !== basename(path)) continue;
    const pid = Number(match[2]);
    if (pid === process.pid || isAlive(pid)) continue;
    await rm(join(directory, entry), { force: true }).catch(() => undefined);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
