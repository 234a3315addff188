import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** The file, in the user's config directory, that lists the sessions this user's chats started. */
export const KNOWN_SESSIONS_FILE = 'sessions.json';

/**
 * The sessions this user's chats started, by the real path of their file, kept in the user's own
 * config directory. `.unstuck/sessions/` is in the project: a cloned repository can ship a session
 * whose history (a system message, a "user" asking for anything) is what the model is told on
 * `--resume`. The newest session is taken only from this list; any other one must be named.
 * Nothing inside the project, so nothing the model writes there, can add an entry.
 */
export interface KnownSessions {
  /** Where the list is kept; undefined when the environment names no home (nothing is known). */
  readonly file: string | undefined;
  has(path: string): Promise<boolean>;
  /** Adds `path`, dropping entries whose sessions folder is gone (a deleted project). Fails only when the list cannot be written. */
  add(path: string): Promise<void>;
}

export function createKnownSessions(directory: string | undefined, now: () => Date = () => new Date()): KnownSessions {
  const file = directory === undefined ? undefined : join(directory, KNOWN_SESSIONS_FILE);
  const load = async (): Promise<Record<string, string>> => {
    if (file === undefined) return {};
    try {
      const parsed = JSON.parse(await readFile(file, 'utf8')) as { sessions?: unknown };
      const sessions = parsed?.sessions;
      return sessions !== null && typeof sessions === 'object' && !Array.isArray(sessions) ? (sessions as Record<string, string>) : {};
    } catch {
      // Missing or damaged: nothing is known; the next new session writes a good list.
      return {};
    }
  };
  return {
    file,
    async has(path) {
      return Object.hasOwn(await load(), path);
    },
    async add(path) {
      if (file === undefined || directory === undefined) return;
      const sessions: Record<string, string> = {};
      for (const [known, at] of Object.entries(await load())) {
        // The folder, not the file: a session just started has no file until its first save.
        if ((await lstat(dirname(known)).catch(() => undefined)) !== undefined) sessions[known] = at;
      }
      sessions[path] = now().toISOString();
      await mkdir(directory, { recursive: true, mode: 0o700 });
      const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
      try {
        await writeFile(temporary, `${JSON.stringify({ version: 1, sessions }, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
        await chmod(temporary, 0o600);
        await rename(temporary, file);
      } catch (error) {
        await rm(temporary, { force: true }).catch(() => undefined);
        throw error;
      }
    },
  };
}
