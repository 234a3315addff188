import { open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { UnstuckError } from '../../core/errors.js';
import type { SessionProblem } from '../../session/index.js';
import { isRecord } from './align-repaired.js';
import type { OpenCodeMessage } from './opencode-history.js';
import type { PartEdit } from './opencode-writeback.js';
import { applyEdit } from './opencode-writeback.js';
import { refuseIfOpenForWriting } from './write-guard.js';

/**
 * OpenCode's database (`$XDG_DATA_HOME/opencode/opencode.db`, SQLite in WAL mode): tables `session`, `message`
 * (`id, session_id, time_created, data`) and `part` (`id, message_id, session_id, data`), `data` the JSON of the
 * message or part less its ids. OpenCode reads a session's messages in (time_created, id) order and each
 * message's parts in id order (message-v2.ts `hydrate`); so is it read here.
 */

const SQLITE_HEADER = 'SQLite format 3\0';

/** One session read from the database, with the rows as they were (what a write checks it is still writing over). */
export interface OpenCodeDbSession {
  id: string;
  title: string;
  updated: number;
  history: OpenCodeMessage[];
  /** Each part's row `data` text as read, by part id. */
  partRows: Map<string, string>;
  problems: SessionProblem[];
}

/** Whether FILE begins as a SQLite database does (a path that is not there, or is not a file, is not). */
export async function isSqliteFile(file: string): Promise<boolean> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    // Only a regular file is opened: opening a FIFO with no writer would wait for ever.
    if (!(await stat(file)).isFile()) return false;
    handle = await open(file, 'r');
    const buffer = Buffer.alloc(16);
    const { bytesRead } = await handle.read(buffer, 0, 16, 0);
    return bytesRead === 16 && buffer.toString('latin1') === SQLITE_HEADER;
  } catch {
    return false;
  } finally {
    await handle?.close();
  }
}

/** Where OpenCode keeps its database: `$XDG_DATA_HOME/opencode/opencode.db`, by default under ~/.local/share. */
export function openCodeDataDirectory(env: Record<string, string | undefined>): string {
  const home = env['HOME'] ?? env['USERPROFILE'] ?? '';
  return join(env['XDG_DATA_HOME'] ?? join(home, '.local', 'share'), 'opencode');
}

async function loadDriver(): Promise<typeof BetterSqlite3> {
  try {
    return (await import('better-sqlite3')).default;
  } catch (error) {
    throw new UnstuckError(
      'CONFIG',
      `reading OpenCode's database needs the better-sqlite3 package (npm install better-sqlite3@12): ${(error as Error).message}`,
      { cause: error },
    );
  }
}

async function openDatabase(file: string, readonly: boolean): Promise<BetterSqlite3.Database> {
  const Database = await loadDriver();
  let database: BetterSqlite3.Database;
  try {
    database = new Database(file, { readonly, fileMustExist: true, timeout: 0 });
  } catch (error) {
    throw new UnstuckError('INPUT_INVALID', `cannot open as a SQLite database: ${(error as Error).message}`, {
      file,
      cause: error,
    });
  }
  try {
    const tables = new Set(
      (database.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map(
        (row) => row.name,
      ),
    );
    const missing = ['session', 'message', 'part'].filter((name) => !tables.has(name));
    if (missing.length > 0)
      throw new UnstuckError(
        'INPUT_INVALID',
        `a SQLite database, but not OpenCode's (no ${missing.join(', ')} table); unstuck's own store is read as sqlite:PATH#SESSION`,
        { file },
      );
    return database;
  } catch (error) {
    database.close();
    if (error instanceof UnstuckError) throw error;
    throw new UnstuckError('INPUT_INVALID', `cannot read as a SQLite database: ${(error as Error).message}`, {
      file,
      cause: error,
    });
  }
}

/** The sessions of the database (all of them, or the one named), each with its messages and parts. */
export async function readOpenCodeDatabase(file: string, session?: string): Promise<OpenCodeDbSession[]> {
  const database = await openDatabase(file, true);
  try {
    // One read transaction: sessions, messages and parts from one snapshot, whatever OpenCode writes meanwhile.
    return database.transaction(() => readSessions(database, file, session))();
  } finally {
    database.close();
  }
}

function readSessions(database: BetterSqlite3.Database, file: string, session?: string): OpenCodeDbSession[] {
  const sessions = database
    .prepare(
      `select id, title, time_updated as updated from session${session === undefined ? '' : ' where id = ?'} order by time_created, id`,
    )
    .all(...(session === undefined ? [] : [session])) as { id: string; title: string; updated: number }[];
  if (session !== undefined && sessions.length === 0)
    throw new UnstuckError('INPUT_INVALID', `no session '${session}' in this OpenCode database`, { file });
  const messages = database.prepare('select id, data from message where session_id = ? order by time_created, id');
  const parts = database.prepare('select id, message_id, data from part where session_id = ? order by message_id, id');
  return sessions.map((row) => {
    const problems: SessionProblem[] = [];
    const parse = (table: string, id: string, text: string): Record<string, unknown> | undefined => {
      try {
        const value: unknown = JSON.parse(text);
        if (isRecord(value)) return value;
      } catch {}
      problems.push({ file, why: `${table} ${id}: its data is not a JSON object (kept as it is, not read)` });
      return undefined;
    };
    const byMessage = new Map<string, Record<string, unknown>[]>();
    const partRows = new Map<string, string>();
    for (const part of parts.all(row.id) as { id: string; message_id: string; data: string }[]) {
      const data = parse('part', part.id, part.data);
      if (data === undefined) continue;
      partRows.set(part.id, part.data);
      const list = byMessage.get(part.message_id) ?? [];
      list.push({ ...data, id: part.id, sessionID: row.id, messageID: part.message_id });
      byMessage.set(part.message_id, list);
    }
    const history: OpenCodeMessage[] = [];
    for (const message of messages.all(row.id) as { id: string; data: string }[]) {
      const data = parse('message', message.id, message.data);
      if (data === undefined) continue;
      history.push({ info: { ...data, id: message.id, sessionID: row.id }, parts: byMessage.get(message.id) ?? [] });
    }
    return { id: row.id, title: row.title, updated: row.updated, history, partRows, problems };
  });
}

/**
 * Writes the edits of one session's tool parts: refused while another process has the database (or its WAL)
 * open for writing, which a running OpenCode does; then a copy of the whole database through SQLite's online
 * backup API (FILE.bak, put in place by a rename so an existing FILE.bak that is a link is replaced, not
 * written through); then one IMMEDIATE transaction (for every session given) that checks every row it changes is still the row read and
 * changes only those rows. Nothing else in the database is touched.
 */
export async function writeOpenCodeEdits(
  file: string,
  changes: readonly { session: OpenCodeDbSession; edits: readonly PartEdit[] }[],
): Promise<{ backup: string }> {
  // A running OpenCode (its TUI, `run` or `serve`) keeps the database and its WAL open read-write all along.
  for (const path of [file, `${file}-wal`])
    await refuseIfOpenForWriting(path).catch((error: unknown) => {
      if (!(error instanceof UnstuckError)) throw error;
      throw new UnstuckError(error.code, error.message.replace('not replaced, nothing written', 'nothing written'), {
        file,
      });
    });
  const database = await openDatabase(file, false);
  try {
    const backup = `${file}.bak`;
    const temporary = join(dirname(file), `.${basename(file)}.bak-${process.pid}`);
    try {
      await database.backup(temporary);
      await rename(temporary, backup);
    } catch (error) {
      await rm(temporary, { force: true });
      throw new UnstuckError('IO', `could not back the database up (${(error as Error).message}): nothing written`, {
        file,
        cause: error,
      });
    }
    const select = database.prepare('select data from part where id = ? and session_id = ?');
    const update = database.prepare('update part set data = ? where id = ? and session_id = ?');
    const remove = database.prepare('delete from part where id = ? and session_id = ?');
    const write = database.transaction(() => {
      for (const { session, edits } of changes)
        for (const edit of edits) {
          const read = session.partRows.get(edit.part);
          const now = (select.get(edit.part, session.id) as { data: string } | undefined)?.data;
          if (read === undefined || now !== read)
            throw new UnstuckError(
              'IO',
              `part ${edit.part} changed since it was read (OpenCode wrote to the session meanwhile): nothing written; run fix --write again`,
              { file },
            );
          if (edit.kind === 'delete') remove.run(edit.part, session.id);
          else
            update.run(
              JSON.stringify(applyEdit(JSON.parse(read) as Record<string, unknown>, edit)),
              edit.part,
              session.id,
            );
        }
    });
    try {
      write.immediate();
    } catch (error) {
      if (error instanceof UnstuckError) throw error;
      const code = (error as { code?: string }).code ?? '';
      if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
        throw new UnstuckError(
          'IO',
          'is being written by another process (OpenCode running on it?): nothing written; end that session first, then run fix --write again',
          { file },
        );
      throw new UnstuckError('IO', `could not write (${(error as Error).message}): nothing written`, {
        file,
        cause: error,
      });
    }
    return { backup };
  } finally {
    database.close();
  }
}
