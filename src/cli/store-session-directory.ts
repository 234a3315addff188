import type { ChatBackend } from '../chat/chat-backend.js';
import type { SessionDirectory, SessionEntry } from '../chat/session-directory.js';
import { createSessionDirectory } from '../chat/session-directory.js';
import { UnstuckError } from '../core/errors.js';
import type { Io } from './io.js';
import { isStoreUrl, listStoreSessions, openStoreUrl, parseStoreUrl } from './store-url.js';

/**
 * `unstuck chat --store sqlite:PATH | postgres://USER@HOST/DB`: the chat's sessions in a
 * database instead of .unstuck/sessions/. A session's "path" is `URL#ID`, which the backend
 * returned by `withStoreUrl` opens as a database store; ids are made and resumed as for files.
 */
export function createStoreSessionDirectory(text: string, io: Io): SessionDirectory {
  const url = parseStoreUrl(text, io);
  if (url.session !== undefined)
    throw new UnstuckError(
      'USAGE',
      `--store takes the database without a session (${url.base}); name the session with --resume ID`,
      { file: url.base },
    );
  // Ids as the file sessions make them (time-sorted), so both kinds read alike.
  const files = createSessionDirectory(io.cwd);
  const pathOf = (id: string): string => {
    files.pathOf(id); // the same id rules
    return `${url.base}#${id}`;
  };
  const list = async (): Promise<SessionEntry[]> =>
    (await listStoreSessions(url)).map((entry) => ({
      id: entry.id,
      path: pathOf(entry.id),
      modified: entry.updated,
      bytes: 0,
    }));
  const find = async (id?: string): Promise<SessionEntry> => {
    const entries = await list();
    if (id === undefined) {
      const newest = entries[0];
      if (newest === undefined) throw new UnstuckError('USAGE', `no session to resume in ${url.base}`);
      return newest;
    }
    const exact = entries.find((entry) => entry.id === id);
    if (exact !== undefined) return exact;
    const matches = entries.filter((entry) => entry.id.startsWith(id));
    if (matches.length === 1 && matches[0] !== undefined) return matches[0];
    if (matches.length > 1)
      throw new UnstuckError(
        'USAGE',
        `session id '${id}' is ambiguous: ${matches.map((entry) => entry.id).join(', ')}`,
      );
    throw new UnstuckError('USAGE', `no session '${id}' in ${url.base} (see /sessions)`);
  };
  return {
    path: url.base,
    createId: () => files.createId(),
    pathOf,
    list,
    find,
    ensure: async () => undefined,
    async select(choice) {
      if (choice.kind === 'resume') return await find(choice.id);
      const id = files.createId();
      return { id, path: pathOf(id) };
    },
  };
}

/** The backend with `createStore` opening `URL#ID` paths as database stores (the password from io.env's PGPASSWORD). */
export function withStoreUrl(backend: ChatBackend, io: Io): ChatBackend {
  return {
    ...backend,
    createStore: (path) => (isStoreUrl(path) ? openStoreUrl(parseStoreUrl(path, io)) : backend.createStore(path)),
  };
}
