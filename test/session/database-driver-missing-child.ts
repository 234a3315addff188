/**
 * Run from a bundle outside any node_modules, where neither better-sqlite3 nor pg can be found:
 * `unstuck/session` still loads, and each database store fails with one CONFIG error.
 */
import { isUnstuckError } from '../../src/core/errors.js';
import { createMemoryStore, createPostgresStore, createSqliteStore } from '../../src/session/index.js';

const lines: string[] = [];
await createMemoryStore().save([{ role: 'user', content: 'the rest of the package works' }]);
for (const store of [
  createSqliteStore('/nonexistent/sessions.db'),
  createPostgresStore('postgres://me@127.0.0.1:1/db'),
]) {
  try {
    await store.load();
    lines.push('loaded?');
  } catch (error) {
    lines.push(isUnstuckError(error) ? `${error.code} ${error.message.split(':')[0]}` : `untyped ${String(error)}`);
  }
}
process.stdout.write(`${lines.join('\n')}\n`);
