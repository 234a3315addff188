import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { run } from '../../src/cli/run.js';
import { createSqliteStore } from '../../src/session/index.js';
import { captureIo } from '../support/capture-io.js';
import type { PostgresServer } from '../support/postgres-server.js';
import { freePort, postgresSkipReason, startPostgres } from '../support/postgres-server.js';
import { asJson, temporaryDirectory, toolLoopSession } from './helpers.js';

/** `unstuck convert`, `check` and `fix` between files and database URLs (sqlite:PATH#ID, postgres://…/DB#ID). */
const skipPostgres = postgresSkipReason();
let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
let server: PostgresServer | undefined;
/** The server's URL without the password, which the CLI takes from PGPASSWORD only. */
let postgres: string;
let env: Record<string, string>;

before(async () => {
  directory = await temporaryDirectory();
  if (skipPostgres === undefined) {
    server = await startPostgres();
    postgres = `postgres://${server.user}@127.0.0.1:${server.port}/postgres`;
    env = { PGPASSWORD: server.password };
  }
});
after(async () => {
  await server?.stop();
  await directory?.dispose();
});

async function cli(argv: string[], extraEnv: Record<string, string> = {}) {
  const io = captureIo({ cwd: directory.path, env: { ...env, ...extraEnv } });
  const code = await run(argv, io);
  return { code, out: io.out(), err: io.err() };
}

/** A history with a tool call whose result is missing: check says so, fix answers it. */
const broken = asJson([
  ...toolLoopSession(2),
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_lost', type: 'function', function: { name: 'read_file', arguments: '{}' } }],
  },
  { role: 'user', content: 'and now?' },
]);

describe('unstuck convert, check and fix on database URLs', () => {
  it('converts a file to a SQLite session, to PostgreSQL and back to a file without losing a byte', {
    skip: skipPostgres,
  }, async () => {
    const messages = asJson(toolLoopSession(4));
    await writeFile(join(directory.path, 'history.json'), JSON.stringify(messages));
    const file = (name: string) => join(directory.path, name);
    const steps: [string, string][] = [
      [file('history.json'), 'sqlite:sessions.db#copy'],
      ['sqlite:sessions.db#copy', `${postgres}#copy`],
      [`${postgres}#copy`, file('back.jsonl')],
      [file('back.jsonl'), file('back.json')],
    ];
    for (const [input, output] of steps) {
      const result = await cli(['convert', input, output]);
      assert.equal(result.code, 0, result.err);
      assert.equal(
        result.err,
        `unstuck convert: ${messages.length} messages written to ${output} (${output.endsWith('.jsonl') ? 'jsonl' : 'json'})\n`,
      );
    }
    assert.deepEqual(JSON.parse(await readFile(join(directory.path, 'back.json'), 'utf8')), messages);
  });

  it('checks a SQLite session: violations listed, exit 1; fix --write repairs it in place and keeps the original as ID.bak', async () => {
    const store = createSqliteStore(join(directory.path, 'fix.db'), { session: 'work' });
    await store.save(broken);
    await store.close();
    const checked = await cli(['check', 'sqlite:fix.db#work']);
    assert.equal(checked.code, 1, checked.err);
    assert.match(checked.out, /^sqlite:fix\.db#work: \d+ problems? for openai \(11 messages\)\n/);
    assert.match(checked.out, /call_lost/);
    const fixed = await cli(['fix', '--write', 'sqlite:fix.db#work']);
    assert.equal(fixed.code, 0, fixed.err);
    assert.match(
      fixed.err,
      /^sqlite:fix\.db#work: \d+ changes?, written \(original kept as sqlite:fix\.db#work\.bak\)/,
    );
    assert.equal(
      (await cli(['check', 'sqlite:fix.db#work'])).out,
      'sqlite:fix.db#work: valid for openai (12 messages)\n',
    );
    const backup = await cli(['convert', 'sqlite:fix.db#work.bak', '-']);
    assert.deepEqual(JSON.parse(backup.out), broken);
  });

  it('fix without --write prints the repaired history as JSON and leaves the session alone', async () => {
    const store = createSqliteStore(join(directory.path, 'print.db'), { session: 's' });
    await store.save(broken);
    await store.close();
    const result = await cli(['fix', 'sqlite:print.db#s']);
    assert.equal(result.code, 0, result.err);
    assert.equal((JSON.parse(result.out) as unknown[]).length, 12);
    assert.equal((await cli(['check', 'sqlite:print.db#s'])).code, 1);
  });

  it('lists a row that does not decode as damage, with the session and position', async () => {
    const path = join(directory.path, 'damaged.db');
    const store = createSqliteStore(path, { session: 's' });
    await store.save(toolLoopSession(1));
    await store.close();
    const database = new Database(path);
    database.prepare('UPDATE unstuck_messages SET body = \'{"role":\' WHERE position = 2').run();
    database.close();
    const result = await cli(['check', 'sqlite:damaged.db#s']);
    assert.equal(result.code, 1);
    assert.match(
      result.out,
      /^sqlite:damaged\.db#s: \d+ problems? for openai \(4 messages\)\n {2}sqlite:.*damaged\.db#s {2}damaged: the message at position 2 does not decode \(not JSON: .*\): it was left out\n/,
    );
  });

  it('bad URLs and databases are one line each, exit 2, and write nothing', async () => {
    await writeFile(join(directory.path, 'history.json'), JSON.stringify(toolLoopSession(4)));
    const port = await freePort();
    const cases: [string[], RegExp][] = [
      [['check', 'sqlite:fix.db'], /^unstuck check: sqlite:fix\.db: name the session: sqlite:fix\.db#SESSION-ID\n$/],
      [
        ['check', 'sqlite:fix.db#has space'],
        /^unstuck check: sqlite:fix\.db: '#has space' is not a session id: write sqlite:fix\.db#SESSION-ID \(no spaces\)\n$/,
      ],
      [
        ['check', 'postgres://me:hunter2@127.0.0.1:5432/db#s'],
        /^unstuck check: postgres:\/\/me@127\.0\.0\.1:5432\/db: put the PostgreSQL password in PGPASSWORD \(or ~\/\.pgpass\), not in the URL: the URL is printed and stays in the shell history\n$/,
      ],
      [
        ['check', 'postgres://me@127.0.0.1:5432/db?sslmode=disable&password=hunter2#s'],
        /^unstuck check: postgres:\/\/me@127\.0\.0\.1:5432\/db: put the PostgreSQL password in PGPASSWORD/,
      ],
      [
        ['check', `postgres://me@127.0.0.1:${port}/db#s`],
        new RegExp(
          `^unstuck check: postgres://me@127\\.0\\.0\\.1:${port}/db#s: cannot reach the PostgreSQL server: ECONNREFUSED\\n$`,
        ),
      ],
      [
        ['convert', join(directory.path, 'history.json'), `postgres://me@127.0.0.1:${port}/db#s`],
        new RegExp(
          `^unstuck convert: postgres://me@127\\.0\\.0\\.1:${port}/db#s: cannot reach the PostgreSQL server: ECONNREFUSED\\n$`,
        ),
      ],
      [
        ['convert', join(directory.path, 'history.json'), 'sqlite:history.json#s'],
        /^unstuck convert: sqlite:.*history\.json#s: cannot use the SQLite database: file is not a database\n$/,
      ],
    ];
    for (const [argv, pattern] of cases) {
      const result = await cli(argv);
      assert.equal(result.code, 2, `${argv.join(' ')}: ${result.err}`);
      assert.match(result.err, pattern);
      assert.doesNotMatch(result.err, /hunter2/);
    }
    assert.deepEqual(JSON.parse(await readFile(join(directory.path, 'history.json'), 'utf8')).length, 17);
  });

  it('a wrong PGPASSWORD and a schema from a newer unstuck are one line each', { skip: skipPostgres }, async () => {
    const wrong = await cli(['check', `${postgres}#s`], { PGPASSWORD: 'not-it' });
    assert.equal(wrong.code, 2);
    assert.match(
      wrong.err,
      /^unstuck check: postgres:\/\/unstuck@127\.0\.0\.1:\d+\/postgres#s: the PostgreSQL server refused the login: password authentication failed for user "unstuck"\n$/,
    );
    const path = join(directory.path, 'newer.db');
    const store = createSqliteStore(path, { session: 's' });
    await store.save([{ role: 'user', content: 'hello' }]);
    await store.close();
    const database = new Database(path);
    database.prepare('INSERT INTO unstuck_schema (version) VALUES (2)').run();
    database.close();
    const newer = await cli(['convert', join(directory.path, 'history.json'), 'sqlite:newer.db#s']);
    assert.equal(newer.code, 2);
    assert.match(
      newer.err,
      /^unstuck convert: sqlite:.*newer\.db#s: the database holds session schema version 2, newer than this unstuck knows \(1\): upgrade unstuck; nothing was changed\n$/,
    );
    const reopened = new Database(path);
    assert.deepEqual(reopened.prepare('SELECT body FROM unstuck_messages').all(), [
      { body: '{"role":"user","content":"hello"}' },
    ]);
    reopened.close();
  });
});
