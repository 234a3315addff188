import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, readdir, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { UnstuckError } from '../core/errors.js';
import type { KnownSessions } from './known-sessions.js';
import { ensurePrivateDirectory } from './private-directory.js';

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

/** Which session to start in: a new one, or `--resume [id]` (the newest without an id). */
export type SessionChoice = { kind: 'new' } | { kind: 'resume'; id?: string };

export interface SessionDirectory {
  readonly path: string;
  /** A fresh id, `YYYYMMDD-HHMMSS-xxxx` in UTC, which sorts by time. */
  createId(): string;
  pathOf(id: string): string;
  /** Every session, newest first. */
  list(): Promise<SessionEntry[]>;
  /**
   * The session named by `id` or by a unique prefix of it; without an id, the newest one this
   * user's chat started (`known`): a session shipped in the project is resumed only by name.
   */
  find(id?: string): Promise<SessionEntry>;
  ensure(): Promise<void>;
  /** The id and file of the chosen session; a new one gets a fresh id (its file appears at its first save). */
  select(choice: SessionChoice): Promise<{ id: string; path: string }>;
}

export function createSessionDirectory(
  cwd: string,
  options: { now?: () => Date; random?: () => string; known?: KnownSessions } = {},
): SessionDirectory {
  const path = join(cwd, SESSIONS_DIRECTORY);
  const now = options.now ?? (() => new Date());
  const random = options.random ?? (() => randomBytes(2).toString('hex'));
  const pathOf = (id: string): string => {
    if (!ID_PATTERN.test(id))
      throw new UnstuckError('USAGE', `'${id}' is not a session id (letters, digits, '.', '_' and '-')`);
    return join(path, `${id}${EXTENSION}`);
  };
  const createId = (): string => {
    const iso = now().toISOString();
    return `${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}-${random()}`;
  };
  /**
   * `.unstuck/sessions` must be a real folder: a repository can ship it as a link to any folder of
   * the user's (`~/.bashrc.d`, whose files a shell sources), and the chat would make that folder
   * 0700 and write transcripts, with the model's text in them, into it.
   */
  const refuseLink = async (): Promise<void> => {
    const info = await lstat(path).catch(() => undefined);
    if (info?.isSymbolicLink() === true)
      throw new UnstuckError(
        'USAGE',
        'is a symbolic link; refusing to keep or read sessions through it (remove it or make it a folder)',
        { file: path },
      );
  };
  const list = async (): Promise<SessionEntry[]> => {
    await refuseLink();
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
  const find = async (id?: string): Promise<SessionEntry> => {
    const entries = await list();
    if (id === undefined) {
      if (entries.length === 0) throw new UnstuckError('USAGE', `no session to resume in ${SESSIONS_DIRECTORY}`);
      const known = options.known;
      if (known === undefined) return entries[0] as SessionEntry;
      const started = await known.paths();
      for (const entry of entries) if (started.has(await realPathOf(entry.path))) return entry;
      throw new UnstuckError(
        'USAGE',
        `no session started by your unstuck chat in ${SESSIONS_DIRECTORY} (${entries.length === 1 ? 'the one there was' : `the ${entries.length} there were`} made elsewhere, e.g. shipped with the project: read it, then name it with --resume ID)`,
      );
    }
    pathOf(id);
    const exact = entries.find((entry) => entry.id === id);
    if (exact !== undefined) return exact;
    const matches = entries.filter((entry) => entry.id.startsWith(id));
    if (matches.length === 1 && matches[0] !== undefined) return matches[0];
    if (matches.length > 1)
      throw new UnstuckError(
        'USAGE',
        `session id '${id}' is ambiguous: ${matches.map((entry) => entry.id).join(', ')}`,
      );
    throw new UnstuckError('USAGE', `no session '${id}' in ${SESSIONS_DIRECTORY} (see /sessions)`);
  };
  const ensure = async (): Promise<void> => {
    await ensurePrivateDirectory(cwd);
    await refuseLink();
    await mkdir(path, { recursive: true, mode: 0o700 });
    // A folder made by an older version is 0755: closed now too.
    await chmod(path, 0o700).catch(() => undefined);
  };
  return {
    path,
    createId,
    pathOf,
    list,
    find,
    ensure,
    async select(choice) {
      if (choice.kind === 'resume') return await find(choice.id);
      await ensure();
      const id = createId();
      // Remembered before the first save, so that a later --resume takes it; a list that cannot be written only costs that.
      await options.known?.add(await realPathOf(pathOf(id))).catch(() => undefined);
      return { id, path: pathOf(id) };
    },
  };
}

/** The real path of a session file (its folder resolved): one name per file for the list of known sessions. */
async function realPathOf(path: string): Promise<string> {
  const folder = await realpath(dirname(path)).catch(() => dirname(path));
  return join(folder, basename(path));
}
