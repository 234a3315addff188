import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { run } from '../../../src/cli/run.js';
import { toOpenCodeChat } from '../../../src/cli/sessions/opencode-history.js';
import { sessionProfile } from '../../../src/cli/sessions/opencode-session.js';
import { captureIo } from '../../support/capture-io.js';
import { useTemporaryDirectory } from '../helpers.js';

const fixtures = fileURLToPath(new URL('../../fixtures/agents/opencode/', import.meta.url));
const NAME = 'read-tool-loop.opencode-1.18.33';
const { path } = useTemporaryDirectory('unstuck-opencode-');

interface RowsFixture {
  opencode: string;
  schema: string[];
  session: Record<string, unknown>[];
  message: Record<string, unknown>[];
  part: Record<string, unknown>[];
}

async function rowsFixture(state?: string): Promise<RowsFixture> {
  return JSON.parse(
    await readFile(`${fixtures}${NAME}${state === undefined ? '' : `.${state}`}.rows.json`, 'utf8'),
  ) as RowsFixture;
}

/** OpenCode's tables (its own CREATE statements) with the rows the real binary wrote, in a WAL database. */
async function databaseOf(file: string, rows: RowsFixture): Promise<string> {
  await mkdir(join(file, '..'), { recursive: true });
  const database = new Database(file);
  database.pragma('journal_mode = WAL');
  database.pragma('foreign_keys = OFF');
  for (const sql of rows.schema) database.exec(sql);
  for (const table of ['session', 'message', 'part'] as const)
    for (const row of rows[table]) {
      const columns = Object.keys(row);
      database
        .prepare(
          `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values (${columns.map(() => '?').join(', ')})`,
        )
        .run(...columns.map((column) => row[column]));
    }
  database.close();
  return file;
}

function tableRows(file: string): Record<string, Record<string, unknown>[]> {
  const database = new Database(file, { readonly: true });
  try {
    return Object.fromEntries(
      ['session', 'message', 'part'].map((table) => [
        table,
        database.prepare(`select * from "${table}" order by id`).all() as Record<string, unknown>[],
      ]),
    );
  } finally {
    database.close();
  }
}

function changedIds(
  before: Record<string, Record<string, unknown>[]>,
  after: Record<string, Record<string, unknown>[]>,
): string[] {
  const out: string[] = [];
  for (const table of Object.keys(before)) {
    const a = new Map((before[table] ?? []).map((row) => [row['id'], JSON.stringify(row)]));
    const b = new Map((after[table] ?? []).map((row) => [row['id'], JSON.stringify(row)]));
    for (const id of new Set([...a.keys(), ...b.keys()]))
      if (a.get(id) !== b.get(id)) out.push(`${table} ${String(id)}`);
  }
  return out;
}

function historyOf(rows: RowsFixture) {
  return rows.message.map((message) => ({
    info: { ...JSON.parse(message['data'] as string), id: message['id'] },
    parts: rows.part
      .filter((part) => part['message_id'] === message['id'])
      .sort((a, b) => (String(a['id']) < String(b['id']) ? -1 : 1))
      .map((part) => ({ ...JSON.parse(part['data'] as string), id: part['id'] })),
  }));
}

describe('OpenCode 1.18.33 sessions (rows and export written by the real binary)', () => {
  test('the chat read from the rows is what OpenCode sent on resume (less its system prompt)', async () => {
    const rows = await rowsFixture();
    const sent = JSON.parse(await readFile(`${fixtures}${NAME}.control-request.messages.json`, 'utf8')) as unknown[];
    // The rows were saved after that resume: its answer is the one message more.
    const history = historyOf(rows);
    assert.deepEqual(sessionProfile(history, {}), { profile: 'deepseek', model: 'deepseek-chat' });
    assert.deepEqual(toOpenCodeChat(history, sessionProfile(history, {})).messages, [
      ...sent,
      { role: 'assistant', content: 'Resumed.', reasoning_content: '' },
    ]);
  });

  test('check: the session as written is valid, under the profile of its provider (deepseek)', async () => {
    const file = await databaseOf(path('valid/opencode.db'), await rowsFixture());
    const io = captureIo();
    assert.equal(await run(['check', file], io), 0, io.out() + io.err());
    assert.match(io.out(), /opencode\.db#ses_\w+: valid for deepseek \(OpenCode session, 6 messages\)/);
    const json = captureIo();
    assert.equal(await run(['check', '--json', file], json), 0);
    const report = JSON.parse(json.out()) as { files: { agent: string; profile: string; violations: unknown[] }[] };
    assert.deepEqual(
      report.files.map((entry) => [entry.agent, entry.profile, entry.violations.length]),
      [['opencode', 'deepseek', 0]],
    );
    const before = tableRows(file);
    const fix = captureIo();
    assert.equal(await run(['fix', '--write', file], fix), 0, fix.err());
    assert.match(fix.err(), /valid, nothing to repair/);
    assert.deepEqual(tableRows(file), before);
    assert.equal(existsSync(`${file}.bak`), false, 'nothing to write: no backup either');
  });

  for (const [state, rule, message] of [
    ['duplicated-tool-part', 'tool-call-id-duplicate', "Duplicate value for 'tool_call_id' of call_00_emu1"],
    ['empty-call-id', 'tool-call-id-missing', "Missing required parameter: 'messages[1].tool_calls[0].id'."],
  ] as const) {
    test(`${state}: check names ${rule}; fix --write changes only that tool part's row, after a backup; then valid`, async () => {
      const file = await databaseOf(path(`${state}/opencode.db`), await rowsFixture(state));
      const check = captureIo();
      assert.equal(await run(['check', file], check), 1, check.out() + check.err());
      assert.match(check.out(), new RegExp(rule));
      assert.ok(check.out().includes(message), check.out());
      const before = tableRows(file);
      const dry = captureIo();
      assert.equal(await run(['fix', file], dry), 0, dry.err());
      assert.deepEqual(tableRows(file), before, 'fix without --write writes nothing');
      const fix = captureIo();
      assert.equal(await run(['fix', '--write', file], fix), 0, fix.err());
      const named = [...fix.err().matchAll(/tool part (prt_\w+): callID '[^']*' -> '(call_unstuck_\w+)'/g)];
      assert.equal(named.length, 1, fix.err());
      const after = tableRows(file);
      assert.deepEqual(changedIds(before, after), [`part ${named[0]?.[1]}`]);
      const edited = after['part']?.find((row) => row['id'] === named[0]?.[1]);
      const original = before['part']?.find((row) => row['id'] === named[0]?.[1]);
      const { callID: newId, ...restNew } = JSON.parse(edited?.['data'] as string) as Record<string, unknown>;
      const { callID: _old, ...restOld } = JSON.parse(original?.['data'] as string) as Record<string, unknown>;
      assert.equal(newId, named[0]?.[2]);
      assert.deepEqual(restNew, restOld, 'only callID changed in that row');
      assert.deepEqual(tableRows(`${file}.bak`), before, 'opencode.db.bak holds the rows as they were');
      const again = captureIo();
      assert.equal(await run(['check', file], again), 0, again.out());
    });
  }

  test('--session ID and FILE#ID name one session; an unknown one is one line, exit 2', async () => {
    const file = await databaseOf(path('named/opencode.db'), await rowsFixture('duplicated-tool-part'));
    const id = (await rowsFixture()).session[0]?.['id'] as string;
    for (const argv of [
      ['check', file, '--session', id],
      ['check', `${file}#${id}`],
    ]) {
      const io = captureIo();
      assert.equal(await run(argv, io), 1);
      assert.equal(
        io
          .out()
          .split('\n')
          .filter((line) => line.includes('#ses_')).length,
        1,
      );
    }
    const io = captureIo();
    assert.equal(await run(['check', file, '--session', 'ses_none'], io), 2);
    assert.equal(io.err().trim().split('\n').length, 1, io.err());
    assert.match(io.err(), /no session 'ses_none' in this OpenCode database/);
  });

  test('a SQLite file that is not OpenCode’s: one line, exit 2, nothing written', async () => {
    const file = path('other.db');
    const database = new Database(file);
    database.exec('create table notes (id text)');
    database.close();
    const io = captureIo();
    assert.equal(await run(['fix', '--write', file], io), 2);
    assert.match(
      io.err(),
      /^unstuck fix: .*other\.db: a SQLite database, but not OpenCode's \(no session, message, part table\)/,
    );
    assert.equal(io.err().trim().split('\n').length, 1);
    assert.equal(existsSync(`${file}.bak`), false);
  });

  test('a FIFO named as FILE is not opened to look for a database: one line, exit 2, no wait', {
    timeout: 10_000,
  }, async () => {
    const fifo = path('pipe');
    execFileSync('mkfifo', [fifo]);
    const io = captureIo();
    assert.equal(await run(['check', fifo], io), 2);
    assert.match(io.err(), /not a regular file \(a FIFO\)/);
  });

  test('fix --write refuses while another connection holds the write lock: one line, no row changed', async () => {
    const file = await databaseOf(path('busy/opencode.db'), await rowsFixture('duplicated-tool-part'));
    const before = tableRows(file);
    // The same process: the /proc guard skips its own pid, so SQLite's lock is what refuses here.
    const holder = new Database(file);
    holder.exec('BEGIN IMMEDIATE');
    try {
      const io = captureIo();
      assert.equal(await run(['fix', '--write', file], io), 2);
      assert.match(io.err(), /is being written by another process \(OpenCode running on it\?\): nothing written/);
      assert.equal(io.err().trim().split('\n').length, 1);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    assert.deepEqual(tableRows(file), before);
  });

  test('scan finds opencode.db under $XDG_DATA_HOME/opencode and lists the broken session; scan --fix mends it', async () => {
    const data = path('xdg');
    const file = await databaseOf(join(data, 'opencode', 'opencode.db'), await rowsFixture('empty-call-id'));
    const env = { HOME: path('nohome'), XDG_DATA_HOME: data };
    const io = captureIo({ env });
    assert.equal(await run(['scan'], io), 1, io.out() + io.err());
    assert.match(
      io.out(),
      /opencode\.db#ses_\w+: OpenCode, 7 messages, .* old: 2 problems: tool-call-id-missing at messages\[1\]/,
    );
    assert.match(io.out(), /scanned 1 session \(OpenCode 1\): 1 with problems/);
    const fix = captureIo({ env });
    assert.equal(await run(['scan', '--fix'], fix), 0, fix.out() + fix.err());
    assert.match(fix.out(), /fixed 1 of 1 session/);
    const again = captureIo();
    assert.equal(await run(['check', file], again), 0);
  });

  test('opencode export JSON: read as OpenCode’s session (not as another wire), valid as exported', async () => {
    const file = path('export.json');
    await copyFile(`${fixtures}${NAME}.export.json`, file);
    const io = captureIo();
    assert.equal(await run(['check', file], io), 0, io.out() + io.err());
    assert.match(io.out(), /valid for openai-chat \(OpenCode session\) \(4 messages\)/);
  });

  test('opencode export with a tool part recorded twice: the 400 named; fix renames the copy’s callID only', async () => {
    const original = JSON.parse(await readFile(`${fixtures}${NAME}.export.json`, 'utf8')) as {
      messages: { parts: Record<string, unknown>[] }[];
    };
    const message = original.messages.find((entry) => entry.parts.some((part) => part['type'] === 'tool'));
    const at = message?.parts.findIndex((part) => part['type'] === 'tool') ?? -1;
    message?.parts.splice(at + 1, 0, { ...message.parts[at], id: `${String(message.parts[at]?.['id'])}0` });
    const file = path('export-duplicated.json');
    const text = `${JSON.stringify(original, null, 2)}\n`;
    await writeFile(file, text);
    const check = captureIo();
    assert.equal(await run(['check', file], check), 1);
    assert.match(check.out(), /tool-call-id-duplicate \(call_00_emu1\)/);
    const fix = captureIo();
    assert.equal(await run(['fix', '--write', file], fix), 0, fix.err());
    const fixed = JSON.parse(await readFile(file, 'utf8')) as typeof original;
    const parts = fixed.messages.flatMap((entry) => entry.parts);
    const copy = parts.find((part) => part['id'] === `${String(message?.parts[at]?.['id'])}0`);
    assert.match(String(copy?.['callID']), /^call_unstuck_/);
    assert.deepEqual({ ...copy, callID: 'call_00_emu1' }, message?.parts[at + 1]);
    assert.deepEqual(
      {
        ...fixed,
        messages: fixed.messages.map((entry) => ({ ...entry, parts: entry.parts.filter((part) => part !== copy) })),
      },
      {
        ...original,
        messages: original.messages.map((entry) => ({
          ...entry,
          parts: entry.parts.filter((part) => part['id'] !== copy?.['id']),
        })),
      },
    );
    assert.equal(await readFile(`${file}.bak`, 'utf8'), text);
  });
});
