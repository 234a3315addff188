import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { expectations, runAgent, startLoggedEmulator } from './agent-process.js';
import type { AgentRunOptions } from './resume-poisoned.js';
import { unstuckMain } from './unstuck-proxy.js';

/**
 * The real OpenCode (1.18.33, its Linux x64 binary package) against the emulator's chat wire, offline (run.ts
 * puts it in a network namespace of its own). HOME and the XDG directories are in a temporary directory;
 * `$XDG_CONFIG_HOME/opencode/opencode.json` names one provider, `deepseek`, with `npm: "@ai-sdk/openai-compatible"`
 * (bundled in the binary: nothing is installed at run time) and `baseURL` at the emulator, which answers with
 * DeepSeek's rules and error texts. `opencode run --title notes` (a title given: no title request) runs a
 * tool loop with OpenCode's `read` tool; the session lands in `$XDG_DATA_HOME/opencode/opencode.db`.
 *
 * Then each poisoning is written into the database's `part` rows, the session resumed with `opencode run -s <id>`
 * straight at the strict emulator (the 400), the built `unstuck fix --write` run on the database, and the session
 * resumed again: the turn must complete, and every row of every table but the ones fix names compare equal.
 * Last, `unstuck fix --write` while `opencode serve` has the database open must refuse, changing nothing.
 */

export const OPENCODE_VERSION = '1.18.33';
const here = fileURLToPath(new URL('.', import.meta.url));
const opencode = join(here, 'node_modules', 'opencode-linux-x64', 'bin', 'opencode');
const fixtures = fileURLToPath(new URL('../../test/fixtures/agents/opencode/', import.meta.url));
const RESUMED = 'Resumed.';
const MODEL = 'deepseek/deepseek-chat';

interface Poisoning {
  name: string;
  rule: string;
  what: string;
  apply(database: Database.Database, session: string): void;
}

const poisonings: Poisoning[] = [
  {
    name: 'duplicated-tool-part',
    rule: 'tool-call-id-duplicate',
    what: 'the tool part recorded twice (a second row, same callID, its id sorting right after the first)',
    apply(database, session) {
      database
        .prepare(
          `insert into part (id, message_id, session_id, time_created, time_updated, data)
           select id || '0', message_id, session_id, time_created, time_updated, data from part
           where session_id = ? and json_extract(data, '$.type') = 'tool' order by id limit 1`,
        )
        .run(session);
    },
  },
  {
    name: 'empty-call-id',
    rule: 'tool-call-id-missing',
    what: "the tool part's callID empty",
    apply(database, session) {
      database
        .prepare(
          `update part set data = json_set(data, '$.callID', '') where id = (
             select id from part where session_id = ? and json_extract(data, '$.type') = 'tool' order by id limit 1)`,
        )
        .run(session);
    },
  },
];

type Rows = Record<string, Record<string, unknown>[]>;

/** Every row of every table (by table, in rowid order): what "the database otherwise unchanged" compares. */
function allRows(file: string): Rows {
  const database = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const tables = database
      .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name")
      .all() as { name: string }[];
    return Object.fromEntries(
      tables.map(({ name }) => [
        name,
        database.prepare(`select * from "${name}" order by rowid`).all() as Record<string, unknown>[],
      ]),
    );
  } finally {
    database.close();
  }
}

/** The rows of `after` that are not in `before`, and those of `before` not in `after`, as `table id`. */
function rowDiff(before: Rows, after: Rows): { changed: string[]; total: number } {
  const changed: string[] = [];
  let total = 0;
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const key = (row: Record<string, unknown>) => JSON.stringify(row);
    const a = new Set((before[table] ?? []).map(key));
    const b = new Set((after[table] ?? []).map(key));
    total += a.size;
    for (const row of after[table] ?? []) if (!a.has(key(row))) changed.push(`${table} ${String(row['id'] ?? '?')}`);
    for (const row of before[table] ?? []) if (!b.has(key(row))) changed.push(`${table} ${String(row['id'] ?? '?')}`);
  }
  return { changed: [...new Set(changed)], total };
}

export async function runOpenCode(options: AgentRunOptions): Promise<string[]> {
  const { log } = options;
  const { failures, expect } = expectations('opencode', log);
  if (!existsSync(opencode)) {
    expect(false, `${opencode} is installed (opencode-linux-x64 is an optional dependency: Linux x64 only)`);
    return failures;
  }
  if (!existsSync(unstuckMain)) {
    expect(false, `${unstuckMain} exists (run \`npm run build\` at the root first)`);
    return failures;
  }
  const root = await mkdtemp(join(tmpdir(), 'unstuck-e2e-opencode-'));
  const work = join(root, 'work');
  const dataHome = join(root, 'data');
  const configHome = join(root, 'config');
  for (const directory of [
    work,
    dataHome,
    join(configHome, 'opencode'),
    join(root, 'cache'),
    join(root, 'state'),
    join(root, 'tmp'),
  ])
    await mkdir(directory, { recursive: true });
  await writeFile(join(work, 'notes.txt'), 'The secret word is lighthouse.\n');
  const db = join(dataHome, 'opencode', 'opencode.db');
  const { emulator, server, seen } = await startLoggedEmulator(
    { wires: ['chat'], profile: 'deepseek' },
    'messages',
    log,
    true,
  );
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: root,
    XDG_DATA_HOME: dataHome,
    XDG_CONFIG_HOME: configHome,
    XDG_CACHE_HOME: join(root, 'cache'),
    XDG_STATE_HOME: join(root, 'state'),
    TMPDIR: join(root, 'tmp'),
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_SHARE: '1',
  };
  await writeFile(
    join(configHome, 'opencode', 'opencode.json'),
    `${JSON.stringify(
      {
        $schema: 'https://opencode.ai/config.json',
        model: MODEL,
        autoupdate: false,
        share: 'disabled',
        provider: {
          deepseek: {
            npm: '@ai-sdk/openai-compatible',
            name: 'unstuck emulator',
            options: { baseURL: `${server.url}/v1`, apiKey: 'dummy' },
            models: { 'deepseek-chat': { name: 'deepseek-chat' } },
          },
        },
      },
      null,
      2,
    )}\n`,
  );
  const oc = (args: string[]) => runAgent(opencode, args, { cwd: work, env, timeoutMs: 120_000 });
  const unstuck = (args: string[]) => runAgent(process.execPath, [unstuckMain, ...args], { cwd: work, env });
  // A rejected request does not use up its step: one answer is kept queued for the next resume.
  let queued = 0;
  /** `throughUnstuckRun`: `unstuck run -- opencode run -s …` (the built CLI points OpenCode at its proxy for one run). */
  const resume = async (label: string, throughUnstuckRun = false) => {
    const before = seen.length;
    if (queued === 0) {
      emulator.push({ text: RESUMED });
      queued += 1;
    }
    const args = ['run', '-s', sessionId, 'Say it again.'];
    const run = throughUnstuckRun
      ? await runAgent(process.execPath, [unstuckMain, 'run', '--', opencode, ...args], {
          cwd: work,
          env,
          timeoutMs: 120_000,
        })
      : await oc(args);
    const requests = seen.slice(before);
    queued -= requests.filter((request) => request.status === 200).length;
    log(
      `   ${label}: exit ${run.code}; emulator ${requests.map((request) => request.status).join(', ') || 'nothing'}; said ${JSON.stringify(run.code === 0 ? run.stdout.trim() : lastLines(run.stderr))}`,
    );
    return { run, requests };
  };
  let sessionId = '';
  try {
    log(`opencode ${(await oc(['--version'])).stdout.trim()}`);
    log('opencode 1. a tool loop: read notes.txt, then text');
    emulator.push(
      { toolCalls: [{ name: 'read', arguments: JSON.stringify({ filePath: join(work, 'notes.txt') }) }] },
      { text: 'The file says the secret word is lighthouse.' },
    );
    const first = await oc(['run', '--title', 'notes', 'What does notes.txt say?']);
    log(`   exit ${first.code}; answer ${JSON.stringify(first.stdout.trim())}`);
    expect(first.code === 0, 'opencode run exits 0');
    expect(
      first.stdout.trim() === 'The file says the secret word is lighthouse.',
      'the turn ends with the scripted text',
    );
    expect(
      seen.some(
        (request) =>
          request.status === 200 &&
          ((request.body as { messages?: { role?: string; content?: unknown }[] }).messages ?? []).some(
            (message) => message.role === 'tool' && JSON.stringify(message.content).includes('lighthouse'),
          ),
      ),
      "OpenCode ran read and sent the file's contents back as a tool message",
    );
    expect(existsSync(db), `OpenCode wrote ${db}`);
    if (!existsSync(db)) return failures;
    {
      const database = new Database(db, { readonly: true });
      sessionId = (database.prepare('select id from session order by time_created limit 1').get() as { id: string }).id;
      const tools = database
        .prepare("select count(*) as n from part where session_id = ? and json_extract(data, '$.type') = 'tool'")
        .get(sessionId) as { n: number };
      database.close();
      expect(tools.n === 1, `the session ${sessionId} has its tool call and result as one tool part`);
    }
    const exported = await oc(['export', sessionId]);
    expect(
      exported.code === 0 && exported.stdout.trimStart().startsWith('{'),
      '`opencode export` writes the session as JSON',
    );

    log('opencode 2. the session as written, resumed straight at the strict emulator (control)');
    const control = await resume('control');
    expect(control.run.code === 0 && control.run.stdout.trim() === RESUMED, 'the unpoisoned session resumes');
    const pristine = join(root, 'pristine.db');
    {
      const database = new Database(db);
      await database.backup(pristine);
      database.close();
    }
    const saved: Record<string, Rows> = { original: allRows(pristine) };

    log('opencode 3. each poisoning, resumed straight at the strict emulator; `unstuck fix --write`; resumed again');
    for (const poisoning of poisonings) {
      await rm(`${db}-wal`, { force: true });
      await rm(`${db}-shm`, { force: true });
      await copyFile(pristine, db);
      {
        const database = new Database(db);
        poisoning.apply(database, sessionId);
        database.close();
      }
      log(`   ${poisoning.name}: ${poisoning.what}`);
      const rejected = await resume('resumed poisoned');
      const rules: (string | undefined)[] = rejected.requests
        .filter((request) => request.status === 400)
        .map((request) => request.violations[0]?.rule);
      expect(
        rejected.run.code !== 0 && rules.includes(poisoning.rule),
        `${poisoning.name}: OpenCode sends it as it is, the strict emulator answers ${poisoning.rule}, the resume fails`,
      );
      // The same poisoned session through `unstuck run`: the proxy mends each request in flight (the database stays
      // as it is, which is what fix is for).
      const viaRun = await resume('resumed with `unstuck run -- opencode run -s …`', true);
      for (const line of viaRun.run.stderr
        .trim()
        .split('\n')
        .filter((entry) => entry.startsWith('unstuck')))
        log(`      ${line}`);
      expect(
        viaRun.run.code === 0 &&
          viaRun.run.stdout.trim() === RESUMED &&
          viaRun.requests.length > 0 &&
          viaRun.requests.every((request) => request.status === 200),
        `${poisoning.name}: through \`unstuck run -- opencode\` the resume completes and the emulator saw only valid requests`,
      );
      expect(
        /unstuck: repaired [1-9]/.test(viaRun.run.stderr),
        `${poisoning.name}: unstuck run says on stderr that it repaired requests`,
      );
      const before = allRows(db);
      saved[poisoning.name] = before;
      const fix = await unstuck(['fix', '--write', db]);
      for (const line of `${fix.stdout}${fix.stderr}`.trim().split('\n')) log(`      unstuck: ${line}`);
      const after = allRows(db);
      const diff = rowDiff(before, after);
      const named = [...`${fix.stderr}`.matchAll(/tool part (prt_\w+)/g)].map((match) => `part ${match[1]}`);
      log(`      rows changed: ${diff.changed.join(', ') || 'none'} (of ${diff.total})`);
      expect(fix.code === 0, `${poisoning.name}: unstuck fix --write exits 0`);
      expect(
        diff.changed.length > 0 && diff.changed.every((row) => named.includes(row)),
        `${poisoning.name}: only the part rows fix names changed; every other row of every table compares equal`,
      );
      expect(existsSync(`${db}.bak`), `${poisoning.name}: the database as it was is kept as opencode.db.bak`);
      if (existsSync(`${db}.bak`))
        expect(
          rowDiff(before, allRows(`${db}.bak`)).changed.length === 0,
          `${poisoning.name}: opencode.db.bak holds every row as it was before the fix`,
        );
      const resumed = await resume('resumed after fix');
      expect(
        resumed.run.code === 0 &&
          resumed.run.stdout.trim() === RESUMED &&
          resumed.requests.every((request) => request.status === 200),
        `${poisoning.name}: after unstuck fix --write the resume completes against the strict emulator`,
      );
    }

    log('opencode 4. `unstuck fix --write` while OpenCode has the database open (`opencode serve`)');
    await rm(`${db}-wal`, { force: true });
    await rm(`${db}-shm`, { force: true });
    await copyFile(pristine, db);
    {
      const database = new Database(db);
      (poisonings[0] as Poisoning).apply(database, sessionId);
      database.close();
    }
    const before = allRows(db);
    const serve = spawn(opencode, ['serve', '--port', '0'], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 15_000);
        const listening = (chunk: Buffer) => {
          if (chunk.toString('utf8').includes('listening')) {
            clearTimeout(timer);
            resolve();
          }
        };
        serve.stdout.on('data', listening);
        serve.stderr.on('data', listening);
      });
      const refused = await unstuck(['fix', '--write', db]);
      log(`      unstuck: ${refused.stderr.trim()}`);
      expect(
        refused.code === 2 && /open for writing by process \d+ \(opencode\)/.test(refused.stderr),
        'fix --write refuses with one line naming the OpenCode process',
      );
    } finally {
      serve.kill('SIGTERM');
      await new Promise((resolve) => serve.once('close', resolve));
    }
    expect(rowDiff(before, allRows(db)).changed.length === 0, 'the refused fix changed no row');

    if (options.saveFixtures) {
      await mkdir(fixtures, { recursive: true });
      const name = `read-tool-loop.opencode-${OPENCODE_VERSION}`;
      const schema = new Database(pristine, { readonly: true });
      const tables = schema
        .prepare(
          "select name, sql from sqlite_master where type in ('table', 'index') and tbl_name in ('session', 'message', 'part') and sql is not null",
        )
        .all() as { name: string; sql: string }[];
      schema.close();
      for (const [state, rows] of Object.entries(saved)) {
        const file = state === 'original' ? `${name}.rows.json` : `${name}.${state}.rows.json`;
        await writeFile(
          join(fixtures, file),
          `${JSON.stringify({ opencode: OPENCODE_VERSION, schema: tables.map((table) => table.sql), session: rows['session'], message: rows['message'], part: rows['part'] }, null, 2)}\n`,
        );
      }
      await writeFile(join(fixtures, `${name}.export.json`), exported.stdout);
      // What OpenCode sent on the control resume, less its system prompt: what the reader's mapping must give.
      const sent = control.requests.find((request) => request.status === 200)?.body as { messages?: unknown[] };
      await writeFile(
        join(fixtures, `${name}.control-request.messages.json`),
        `${JSON.stringify((sent?.messages ?? []).slice(1), null, 2)}\n`,
      );
      log(`   saved the session's rows (as written, and as each poisoning left them) and its export under ${fixtures}`);
    }
  } finally {
    await server.close();
    if (process.env['UNSTUCK_E2E_KEEP'] === '1') log(`kept ${root}`);
    else await rm(root, { recursive: true, force: true });
  }
  return failures;
}

function lastLines(text: string): string {
  return text
    .replaceAll(String.fromCharCode(27), '')
    .replace(/\[[0-9;]*m/g, '')
    .trim()
    .split('\n')
    .slice(-2)
    .join(' ')
    .slice(0, 300);
}
