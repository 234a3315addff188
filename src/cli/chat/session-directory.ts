import { randomBytes } from 'node:crypto';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { UnstuckError } from '../../core/errors.js';

/** Where chat sessions live, relative to the working directory. */
export const SESSIONS_DIRECTORY = join('.unstuck', 'sessions');
const EXTENSION = '.md';
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const SEGMENT = /\.seg-[0-9a-f]{16}$/;

export interface SessionEntry {
  id: string;
  path: string;
  modified: Date;
  bytes: number;
}

export interface SessionDirectory {
  readonly path: string;
  /** A fresh id, `YYYYMMDD-HHMMSS-xxxx` in UTC, which sorts by time. */
  createId(): string;
  pathOf(id: string): string;
  /** Every session, newest first. */
  list(): Promise<SessionEntry[]>;
  /** The session named by `id` or by a unique prefix of it; the newest one without an id. */
  find(id?: string): Promise<SessionEntry>;
  ensure(): Promise<void>;
}

export function createSessionDirectory(cwd: string, options: { now?: () => Date; random?: () => string } = {}): SessionDirectory {
  const path = join(cwd, SESSIONS_DIRECTORY);
  const now = options.now ?? (() => new Date());
  const random = options.random ?? (() => randomBytes(2).toString('hex'));
  const pathOf = (id: string): string => {
    if (!ID_PATTERN.test(id)) throw new UnstuckError('USAGE', `'${id}' is not a session id (letters, digits, '.', '_' and '-')`);
    return join(path, `${id}${EXTENSION}`);
  };
  const list = async (): Promise<SessionEntry[]> => {
    let names: string[];
    try {
      names = await readdir(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const entries: SessionEntry[] = [];
    for (const name of names) {
      if (!name.endsWith(EXTENSION)) continue;
      const id = name.slice(0, -EXTENSION.length);
      // `ID.seg-<digest>.md` files are parts of a long session, not sessions (see session/transcript-store.ts).
      if (!ID_PATTERN.test(id) || SEGMENT.test(id)) continue;
      const info = await stat(join(path, name)).catch(() => undefined);
      if (info?.isFile() !== true) continue;
      entries.push({ id, path: join(path, name), modified: info.mtime, bytes: info.size });
    }
    return entries.sort((a, b) => b.modified.getTime() - a.modified.getTime() || (a.id < b.id ? 1 : -1));
  };
  return {
    path,
    createId() {
      const iso = now().toISOString();
      return `${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}-${random()}`;
    },
    pathOf,
    list,
    async find(id) {
      const entries = await list();
      if (id === undefined) {
        const newest = entries[0];
        if (newest === undefined) throw new UnstuckError('USAGE', `no session to resume in ${SESSIONS_DIRECTORY}`);
        return newest;
      }
      pathOf(id);
      const exact = entries.find((entry) => entry.id === id);
      if (exact !== undefined) return exact;
      const matches = entries.filter((entry) => entry.id.startsWith(id));
      if (matches.length === 1 && matches[0] !== undefined) return matches[0];
      if (matches.length > 1) throw new UnstuckError('USAGE', `session id '${id}' is ambiguous: ${matches.map((entry) => entry.id).join(', ')}`);
      throw new UnstuckError('USAGE', `no session '${id}' in ${SESSIONS_DIRECTORY} (see /sessions)`);
    },
    async ensure() {
      await mkdir(path, { recursive: true });
    },
  };
}
