import { lstat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { readJsonRecord, writeJsonRecord } from './private-json-file.js';

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
  /** The real paths of the sessions on the list, read once per call. */
  paths(): Promise<ReadonlySet<string>>;
  /** Adds `path`, dropping entries whose sessions folder is gone (a deleted project). Fails only when the list cannot be written. */
  add(path: string): Promise<void>;
}

export function createKnownSessions(directory: string | undefined, now: () => Date = () => new Date()): KnownSessions {
  const file = directory === undefined ? undefined : join(directory, KNOWN_SESSIONS_FILE);
  const load = (): Promise<Record<string, string>> => readJsonRecord<string>(file, 'sessions');
  return {
    file,
    async paths() {
      return new Set(Object.keys(await load()));
    },
    async add(path) {
      if (file === undefined || directory === undefined) return;
      const sessions: Record<string, string> = {};
      for (const [known, at] of Object.entries(await load())) {
        // The folder, not the file: a session just started has no file until its first save.
        if ((await lstat(dirname(known)).catch(() => undefined)) !== undefined) sessions[known] = at;
      }
      sessions[path] = now().toISOString();
      await writeJsonRecord(directory, file, 'sessions', sessions);
    },
  };
}
