/**
 * A writer on a database store that saves (or appends) in a loop until it is killed, printing the
 * number of each write once it has resolved. Run by the SQLite and PostgreSQL crash tests (bundled,
 * with better-sqlite3 and pg left to node_modules).
 *
 *   database-crash-child MODE(save|append) KIND(sqlite|postgres) TARGET SESSION FIRST
 */
import { createPostgresStore, createSqliteStore } from '../../src/session/index.js';
import { journalLine, sessionVersion } from './crash-versions.js';

const [mode, kind, target, session, first] = process.argv.slice(2);
if (mode === undefined || kind === undefined || target === undefined || session === undefined || first === undefined) {
  throw new Error('usage: database-crash-child MODE KIND TARGET SESSION FIRST');
}
const options = { session, lockTimeoutMs: 10_000 };
const store = kind === 'sqlite' ? createSqliteStore(target, options) : createPostgresStore(target, options);
await store.load();
for (let number = Number(first); ; number += 1) {
  if (mode === 'append') await store.append!([journalLine(number)]);
  else await store.save(sessionVersion(number));
  process.stdout.write(`${number}\n`);
}
