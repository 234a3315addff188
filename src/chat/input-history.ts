import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { join } from 'node:path';
import { CHAT_DIRECTORY, ensurePrivateDirectory } from './private-directory.js';

/** The interactive prompt's history, kept across runs, relative to the working directory. */
export const HISTORY_FILE = join('.unstuck', 'history');
const KEEP = 500;
/** 500 lines of typed prompts fit many times over; a larger "history" is not ours. */
const MAX_HISTORY_BYTES = 1024 * 1024;
/**
 * The file is a project file: a cloned repository can ship `.unstuck/history` as a link to the
 * user's `~/.bash_history` or `~/.bashrc`, or as a FIFO. Never through a link (the final
 * component; `.unstuck` itself must be a real folder), never anything but a regular file, and
 * never waiting for a writer.
 */
const NO_FOLLOW = (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** Newest first, the order node:readline wants for its `history` option. */
export async function loadInputHistory(cwd: string): Promise<string[]> {
  if (!(await isRealFolder(join(cwd, CHAT_DIRECTORY)))) return [];
  const file = join(cwd, HISTORY_FILE);
  try {
    const handle = await open(file, constants.O_RDWR | NO_FOLLOW);
    try {
      const info = await handle.stat();
      if (!info.isFile() || info.size > MAX_HISTORY_BYTES) return [];
      const lines = (await handle.readFile('utf8')).split('\n').filter((line) => line !== '');
      if (lines.length > KEEP * 2) {
        await handle.truncate(0);
        await handle.write(`${lines.slice(-KEEP).join('\n')}\n`, 0);
      }
      return lines.slice(-KEEP).reverse();
    } finally {
      await handle.close();
    }
  } catch {
    return [];
  }
}

export async function appendInputHistory(cwd: string, line: string): Promise<void> {
  if (line.trim() === '' || line.includes('\n')) return;
  const file = join(cwd, HISTORY_FILE);
  try {
    await ensurePrivateDirectory(cwd);
    const handle = await open(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NO_FOLLOW, 0o600);
    try {
      if (!(await handle.stat()).isFile()) return;
      await handle.write(`${line}\n`);
    } finally {
      await handle.close();
    }
  } catch {
    // History is a convenience: failing to keep it must not disturb the chat.
  }
}

async function isRealFolder(path: string): Promise<boolean> {
  const info = await lstat(path).catch(() => undefined);
  return info?.isDirectory() === true;
}
