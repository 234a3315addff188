import { chmod, lstat, mkdir, readdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { UnstuckError } from '../core/errors.js';
import type { SessionStore } from '../session/index.js';

/** The chat's own folder in the working directory: sessions, input history. */
export const CHAT_DIRECTORY = '.unstuck';

/**
 * Makes `.unstuck/` private: the folder 0700 (so its sessions, whose tool output may hold
 * anything a command printed, are no one else's to read), and a `.gitignore` of `*` in it so a
 * `git add .` does not publish them. An existing `.gitignore` is left as it is. A `.unstuck` that is
 * a symbolic link is refused: a repository could point it anywhere.
 */
export async function ensurePrivateDirectory(cwd: string): Promise<string> {
  const path = join(cwd, CHAT_DIRECTORY);
  const info = await lstat(path).catch(() => undefined);
  if (info?.isSymbolicLink() === true)
    throw new UnstuckError(
      'USAGE',
      `is a symbolic link; refusing to keep sessions through it (remove it or make it a folder)`,
      { file: path },
    );
  if (info === undefined) await mkdir(path, { recursive: true, mode: 0o700 });
  else if (!info.isDirectory()) throw new UnstuckError('USAGE', `is not a folder`, { file: path });
  if (((info?.mode ?? 0) & 0o777) !== 0o700) await chmod(path, 0o700).catch(() => undefined);
  await writeFile(join(path, '.gitignore'), '*\n', { flag: 'wx', mode: 0o600 }).catch(() => undefined);
  return path;
}

/**
 * A session store whose files end up 0600. The store writes each save to a fresh temporary file
 * (its mode from the umask), so the mode is set again after every write; the folder's 0700 covers
 * the moment between.
 */
export function privateStore(store: SessionStore, path: string): SessionStore {
  const stem = `${basename(path, '.md')}.seg-`;
  const restrict = async (withSegments: boolean): Promise<void> => {
    await chmod(path, 0o600).catch(() => undefined);
    if (!withSegments) return;
    const names = await readdir(dirname(path)).catch(() => [] as string[]);
    for (const name of names)
      if (name.startsWith(stem)) await chmod(join(dirname(path), name), 0o600).catch(() => undefined);
  };
  const wrapped: SessionStore = {
    load: () => store.load(),
    async save(messages) {
      await store.save(messages);
      await restrict(true);
    },
    close: () => store.close(),
  };
  if (store.append !== undefined) {
    const append = store.append.bind(store);
    wrapped.append = async (messages) => {
      await append(messages);
      await restrict(false);
    };
  }
  return wrapped;
}
