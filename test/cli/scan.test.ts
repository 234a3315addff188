import assert from 'node:assert/strict';
import { chmod, copyFile, mkdir, readdir, readFile, rm as rmFile, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/cli/run.js';
import { renderProgress, renderScanTable } from '../../src/cli/sessions/scan-table.js';
import { captureIo } from '../support/capture-io.js';
import { useTemporaryDirectory } from './helpers.js';

const fixtures = fileURLToPath(new URL('../fixtures/agents/', import.meta.url));
const { path } = useTemporaryDirectory('unstuck-scan-');

async function place(from: string, to: string): Promise<string> {
  await mkdir(dirname(to), { recursive: true });
  await copyFile(join(fixtures, from), to);
  return to;
}

/** Every file below DIR with its bytes and mtime: what "scan never writes" is checked against. */
async function snapshot(directory: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    files.set(file, `${(await stat(file)).mtimeMs}:${await readFile(file, 'utf8')}`);
  }
  return files;
}

describe('scan', () => {
  test('the default homes: broken, valid, damaged and not-yet-read sessions, each listed right; nothing written', async () => {
    const home = path('home');
    const claude = join(home, 'claude-config', 'projects', '-work');
    await place('claude-code/read-tool-loop.claude-code-2.1.332.jsonl', join(claude, 'valid.jsonl'));
    await place(
      'claude-code/read-tool-loop.claude-code-2.1.332.text-before-tool-result.jsonl',
      join(claude, 'broken.jsonl'),
    );
    await writeFile(join(claude, 'garbage.jsonl'), 'this is not JSON\n');
    const roo = join(home, '.config', 'Code', 'User', 'globalStorage', 'rooveterinaryinc.roo-cline', 'tasks', 't1');
    await place(
      'cline/roo-task/tasks/0f0e2c4a-roo/api_conversation_history.json',
      join(roo, 'api_conversation_history.json'),
    );
    const codex = join(home, '.codex', 'sessions', '2026', '12', '01');
    await place(
      'codex/read-tool-loop.codex-0.171.0.output-before-call.jsonl',
      join(codex, 'rollout-2026-12-01T10-00-00-x.jsonl'),
    );
    await place('codex/read-tool-loop.codex-0.171.0.jsonl', join(codex, 'rollout-2026-12-01T11-00-00-y.jsonl'));
    const gemini = join(home, '.gemini', 'tmp', '1d0d0e76', 'chats');
    await place(
      'gemini-cli/read-tool-loop.gemini-cli-0.61.0.as-written.jsonl',
      join(gemini, 'session-2026-12-01T21-42-5bdd5d14.jsonl'),
    );
    // Gemini CLI's chats before JSONL (one JSON document): recognised, not read.
    await writeFile(join(gemini, 'session-2026-01-01T00-00-old.json'), '{"sessionId":"old","messages":[]}\n');
    // A link out of the scanned roots is not followed.
    const outside = path('outside');
    await place(
      'claude-code/read-tool-loop.claude-code-2.1.332.text-before-tool-result.jsonl',
      join(outside, 'x.jsonl'),
    );
    await symlink(outside, join(claude, 'linked-dir'));
    await symlink(join(outside, 'x.jsonl'), join(claude, 'linked.jsonl'));
    const before = await snapshot(home);

    const io = captureIo({ env: { HOME: home, CLAUDE_CONFIG_DIR: join(home, 'claude-config') } });
    assert.equal(await run(['scan'], io), 1, io.err());
    const lines = io.out().trim().split('\n');
    assert.equal(lines.length, 6, io.out());
    assert.match(
      lines[0] as string,
      /broken\.jsonl: Claude Code, 4 messages, \d+ (min|h|d) old: 1 problem: tool-result-not-first at messages\[2\] \(line 19\)$/,
    );
    assert.match(
      lines[1] as string,
      /rollout-2026-12-01T10-00-00-x\.jsonl: Codex, 6 messages, .*2 problems: tool-result-orphan at messages\[3\] \(line 10\); tool-calls-unanswered at messages\[4\] \(line 11\)$/,
    );
    assert.match(
      lines[2] as string,
      /session-2026-12-01T21-42-5bdd5d14\.jsonl: Gemini CLI, 4 messages, .*1 problem: tool-results-excess at messages\[2\] \(line 7, 8\)$/,
    );
    assert.match(
      lines[3] as string,
      /roo-cline.*api_conversation_history\.json: Cline \/ Roo Code, 3 messages, .*tool-result-not-first at messages\[2\] \(element 4\)$/,
    );
    assert.match(lines[4] as string, /garbage\.jsonl: cannot be read: .*no line of it is a Claude Code event/);
    assert.equal(
      lines[5],
      'scanned 7 sessions (Claude Code 2, unreadable 1, Codex 2, Gemini CLI 1, Cline / Roo Code 1): 4 with problems, 1 that cannot be read, 2 valid; found but not read (no reader yet): Gemini CLI (JSON chat) 1 file',
    );
    assert.ok(!io.out().includes('linked'), 'links are not followed');
    assert.deepEqual(await snapshot(home), before);

    // --report: the broken sessions, each with what fix would change; still nothing written under the homes.
    const report = path('scan-report.html');
    const withReport = captureIo({ env: { HOME: home, CLAUDE_CONFIG_DIR: join(home, 'claude-config') } });
    assert.equal(await run(['scan', '--report', report], withReport), 1);
    const html = await readFile(report, 'utf8');
    assert.equal(html.match(/<section class="session"/g)?.length, 4);
    assert.match(html, /broken\.jsonl<\/h2>/);
    assert.match(html, /data-kind="message-moved"/);
    assert.deepEqual(await snapshot(home), before);
  });

  test('on a terminal, a long scan draws a progress bar on stderr and clears it; stdout (not a terminal) stays the list', async () => {
    const directory = path('many');
    for (let index = 0; index < 60; index += 1)
      await place('claude-code/read-tool-loop.claude-code-2.1.332.jsonl', join(directory, `s${index}.jsonl`));
    const io = captureIo();
    Object.assign(io.stderr, { isTTY: true, columns: 50 });
    assert.equal(await run(['scan', directory], io), 0);
    const frames = io.err().split('\r').slice(1, -1);
    assert.ok(frames.length >= 10, `${frames.length} frames`);
    for (const frame of frames) {
      assert.match(frame, /^scanning [█░]{10,40} \d+\/60 files$/);
      assert.ok([...frame].length <= 50, frame);
    }
    assert.equal(frames[0], `scanning ${'░'.repeat(29)} 0/60 files`);
    assert.equal(io.err().slice(-5), '\r\u001b[2K', 'the bar is cleared at the end');
    assert.equal(io.out(), 'scanned 60 sessions (Claude Code 60): 0 with problems, 0 that cannot be read, 60 valid\n');

    // --json: never a bar, even on a terminal.
    const json = captureIo();
    Object.assign(json.stderr, { isTTY: true, columns: 50 });
    assert.equal(await run(['scan', '--json', directory], json), 0);
    assert.equal(json.err(), '');
    assert.equal((JSON.parse(json.out()) as { sessions: unknown[] }).sessions.length, 60);
  });

  test('on a terminal, stdout is a table of every session (agent, age, messages, problems, path), fitted to its width', async () => {
    const directory = path('table');
    await place('claude-code/read-tool-loop.claude-code-2.1.332.jsonl', join(directory, 'claude', 'valid.jsonl'));
    await place(
      'codex/read-tool-loop.codex-0.171.0.output-before-call.jsonl',
      join(directory, 'codex', 'sessions', '2026', '12', '01', 'rollout-2026-12-01T10-00-00-a-rather-long-name.jsonl'),
    );
    await writeFile(join(directory, 'claude', 'rollout-damaged.jsonl'), 'not json\n');
    for (const columns of [60, 100, 200]) {
      const io = captureIo();
      Object.assign(io.stdout, { isTTY: true, columns });
      assert.equal(await run(['scan', directory], io), 1);
      const lines = io.out().trimEnd().split('\n');
      assert.match(lines[0] as string, /^AGENT +AGE +MESSAGES +PROBLEMS +PATH$/);
      const table = lines.slice(1, 4);
      for (const line of table) assert.ok([...line].length <= columns, `${[...line].length} > ${columns}: ${line}`);
      const codex = table.find((line) => line.startsWith('Codex')) as string;
      assert.match(codex, /^Codex +\d+ min +6 {2}2: tool-/);
      assert.match(codex, /-long-name\.jsonl$/, 'the path is cut from the left: its file name stays');
      if (columns < 150) assert.match(codex, / …/);
      else
        assert.ok(
          codex.endsWith(
            join(
              directory,
              'codex',
              'sessions',
              '2026',
              '12',
              '01',
              'rollout-2026-12-01T10-00-00-a-rather-long-name.jsonl',
            ),
          ),
        );
      assert.match(table.find((line) => line.startsWith('Claude Code')) as string, /^Claude Code +\d+ min +4 {2}ok +/);
      assert.match(table.find((line) => line.startsWith('?')) as string, / cannot b/);
      assert.match(lines[4] as string, /rollout-damaged\.jsonl: cannot be read: /, 'the damaged one in full, one line');
      assert.match(lines[5] as string, /^scanned 3 sessions/);
    }
  });

  test('the table renderer: every line within the width, however narrow; wide characters count as two columns', () => {
    const rows = [
      {
        agent: 'Gemini CLI',
        age: '3 d',
        messages: 1234,
        problems: '2: tool-calls-unanswered, text-block-empty',
        path: '/home/u/.gemini/tmp/プロジェクト/chats/session-1.jsonl',
      },
      { agent: 'Codex', age: '5 min', messages: undefined, problems: 'ok', path: '/x.jsonl' },
    ];
    // 52: the narrowest the columns get (a narrower terminal wraps them).
    for (let width = 52; width <= 140; width += 7)
      for (const line of renderScanTable(rows, width)) {
        const columns = [...line].reduce((sum, char) => sum + (/[\u3000-\u30ff]/.test(char) ? 2 : 1), 0);
        assert.ok(columns <= width, `${columns} > ${width}: ${line}`);
      }
    const [header, gemini, codex] = renderScanTable(rows, 200);
    assert.equal(header, 'AGENT       AGE    MESSAGES  PROBLEMS                                    PATH');
    assert.match(
      gemini as string,
      /^Gemini CLI {2}3 d {8}1234 {2}2: tool-calls-unanswered, text-block-empty {2}\/home/,
    );
    assert.equal(codex, 'Codex       5 min         -  ok                                          /x.jsonl');
    assert.equal(renderProgress(30, 60, 40), `scanning ${'█'.repeat(9)}${'░'.repeat(9)} 30/60 files`);
    assert.equal(renderProgress(60, 60, 200).length, 'scanning '.length + 40 + ' 60/60 files'.length);
  });

  test('DIRs named, --json; all valid exits 0; a DIR that is not there is bad input', async () => {
    const directory = path('named');
    await place('claude-code/parallel-read.claude-code-2.1.332.jsonl', join(directory, 'a', 'p.jsonl'));
    const io = captureIo();
    assert.equal(await run(['scan', '--json', directory], io), 0, io.err());
    const report = JSON.parse(io.out()) as {
      sessions: { file: string; agent: string; messages: number; violations: unknown[] }[];
    };
    assert.equal(report.sessions.length, 1);
    assert.equal(report.sessions[0]?.agent, 'claude-code');
    assert.equal(report.sessions[0]?.messages, 4);
    assert.deepEqual(report.sessions[0]?.violations, []);
    const missing = captureIo();
    assert.equal(await run(['scan', path('not-there')], missing), 2);
    assert.match(missing.err(), /^unstuck scan: .*not-there: not a directory/);
  });

  test('--fix: every broken session repaired as fix --write does it (FILE.bak kept); one it cannot write is named, the rest still fixed', async () => {
    const directory = path('to-fix');
    const broken = [
      await place('codex/read-tool-loop.codex-0.171.0.function-call-recorded-twice.jsonl', join(directory, 'c.jsonl')),
      await place('gemini-cli/read-tool-loop.gemini-cli-0.61.0.as-written.jsonl', join(directory, 'g.jsonl')),
      await place(
        'claude-code/read-tool-loop.claude-code-2.1.332.text-before-tool-result.jsonl',
        join(directory, 'a.jsonl'),
      ),
    ];
    const valid = await place('codex/parallel-read.codex-0.171.0.jsonl', join(directory, 'v.jsonl'));
    const originals = await Promise.all(broken.map((file) => readFile(file, 'utf8')));
    const readOnly = await place(
      'codex/read-tool-loop.codex-0.171.0.output-before-call.jsonl',
      join(directory, 'r.jsonl'),
    );
    await chmod(readOnly, 0o444);
    const io = captureIo();
    assert.equal(await run(['scan', '--fix', directory], io), 1, io.err());
    assert.match(io.out(), /fixed 3 of 4 sessions with problems\n$/);
    assert.match(io.err(), /r\.jsonl.*read-only/);
    for (const [index, file] of broken.entries()) assert.equal(await readFile(`${file}.bak`, 'utf8'), originals[index]);
    await assert.rejects(stat(`${valid}.bak`), 'a valid session is not touched');
    await assert.rejects(stat(`${readOnly}.bak`));
    await chmod(readOnly, 0o644);
    await rmFile(readOnly);
    const again = captureIo();
    assert.equal(await run(['scan', directory], again), 0, again.out());
    assert.match(again.out(), /scanned 4 sessions .*0 with problems, 0 that cannot be read, 4 valid/);
  });
});

test('scan: the Cline CLI keeps its tasks in $CLINE_DIR/data/tasks (default ~/.cline): found there', async () => {
  const home = path('cline-home');
  const task = 'cline/cline-cli-2.18.0.result-twice/tasks/1796173201706/api_conversation_history.json';
  await place(task, join(home, '.cline', 'data', 'tasks', '1796173201706', 'api_conversation_history.json'));
  await place(task, join(home, 'elsewhere', 'data', 'tasks', '1796173201707', 'api_conversation_history.json'));
  for (const [env, where] of [
    [{ HOME: home }, '.cline'],
    [{ HOME: home, CLINE_DIR: join(home, 'elsewhere') }, 'elsewhere'],
  ] as const) {
    const io = captureIo({ env: { ...env } });
    assert.equal(await run(['scan', '--json'], io), 1, io.err());
    const sessions = (JSON.parse(io.out()) as { sessions: { file: string; agent: string }[] }).sessions;
    assert.deepEqual(
      sessions.map((session) => [session.agent, session.file.includes(join(home, where, 'data', 'tasks'))]),
      [['cline', true]],
    );
  }
});

test('scan: a task as the real Cline CLI 2.18.0 wrote it is valid (Cline sends "result missing" for its calls)', async () => {
  const home = path('cline-valid-home');
  const task = 'cline/cline-cli-2.18.0/tasks/1796173201706/api_conversation_history.json';
  await place(task, join(home, '.cline', 'data', 'tasks', '1796173201706', 'api_conversation_history.json'));
  const io = captureIo({ env: { HOME: home } });
  assert.equal(await run(['scan'], io), 0, io.out());
  assert.match(io.out(), /scanned 1 session.* 0 with problems, 0 that cannot be read, 1 valid/);
});
