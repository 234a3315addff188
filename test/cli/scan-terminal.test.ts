import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cleanEnv, NODE_ARGS } from '../chat/harness/run-chat-binary.js';
import { hasTmux, openTmuxTerminal } from '../chat/harness/tmux-terminal.js';

/**
 * `unstuck scan` in a real pseudo-terminal (tmux), as a person runs it: the table fitted to the terminal's width,
 * the progress bar drawn on stderr while it scans and gone at the end. `script` between tmux and unstuck records
 * the raw bytes the terminal got (the bar's frames are overwritten on the screen, so only the recording shows them).
 */
const fixtures = fileURLToPath(new URL('../fixtures/agents/', import.meta.url));
let root: string;

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'unstuck-scan-terminal-'));
  const claude = join(root, 'sessions', 'claude');
  await mkdir(claude, { recursive: true });
  for (let index = 0; index < 80; index += 1)
    await copyFile(
      join(fixtures, 'claude-code', 'read-tool-loop.claude-code-2.1.332.jsonl'),
      join(claude, `valid-${String(index).padStart(2, '0')}.jsonl`),
    );
  const codex = join(root, 'sessions', 'codex', 'sessions', '2026', '12', '01');
  await mkdir(codex, { recursive: true });
  await copyFile(
    join(fixtures, 'codex', 'read-tool-loop.codex-0.171.0.output-before-call.jsonl'),
    join(codex, 'rollout-2026-12-01T10-00-00-0199aaaa-bbbb-cccc-dddd-eeeeffff0000.jsonl'),
  );
  await writeFile(join(claude, 'rollout-damaged.jsonl'), 'not json\n');
});

after(async () => {
  await rm(root, { recursive: true, force: true });
});

const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

describe('unstuck scan in a terminal', { skip: hasTmux() ? false : 'tmux is not installed' }, () => {
  for (const width of [72, 130])
    test(`${width} columns: a table within the width, a progress bar while scanning, cleared at the end`, async () => {
      const recording = join(root, `scan-${width}.typescript`);
      const unstuck = [process.execPath, ...NODE_ARGS, 'scan', join(root, 'sessions')].map(quote).join(' ');
      const terminal = await openTmuxTerminal({
        command: `script -qfe -c ${quote(unstuck)} ${quote(recording)}`,
        cwd: root,
        env: cleanEnv({ TERM: 'xterm-256color' }),
        width,
        height: 120,
      });
      try {
        const screen = await terminal.waitFor(/\[exited \d+\]/, { timeoutMs: 60_000 });
        assert.match(screen, /\[exited 1\]/, 'problems remain: exit 1');
        const lines = screen.split('\n');
        const header = lines.findIndex((line) => /^AGENT +AGE +MESSAGES +PROBLEMS +PATH$/.test(line));
        assert.ok(header >= 0, screen);
        const rows = lines.slice(header + 1, header + 83);
        assert.equal(rows.filter((line) => line.startsWith('Claude Code')).length, 80);
        for (const line of [lines[header] as string, ...rows])
          assert.ok([...line].length <= width, `${[...line].length} > ${width}: ${line}`);
        const codex = rows.find((line) => line.startsWith('Codex')) as string;
        assert.match(codex, /2: tool-/);
        assert.match(codex, /ffff0000\.jsonl$/, "the path is cut from the left, the file's name kept");
        assert.match(screen, /rollout-damaged\.jsonl: cannot be read: /);
        assert.match(
          screen,
          /scanned 82 sessions \(unreadable 1, Claude Code 80, Codex 1\): 1 with problems, 1 that cannot be read, 80 valid/,
        );
        assert.ok(!/scanning [█░]/.test(screen), 'no progress bar left on the screen');
        const raw = await readFile(recording, 'utf8');
        const frames = raw.match(/\rscanning [█░]+ \d+\/82 files/g) ?? [];
        assert.ok(frames.length >= 5, `the bar was drawn while scanning (${frames.length} frames)`);
        for (const frame of frames) assert.ok([...frame].length - 1 <= width, frame);
        assert.ok(raw.includes('\r\u001b[2K'), 'and cleared');
      } finally {
        await terminal.close();
      }
    });

  test('--json in a terminal: no bar, no table, only the JSON', async () => {
    const recording = join(root, 'scan-json.typescript');
    const unstuck = [process.execPath, ...NODE_ARGS, 'scan', '--json', join(root, 'sessions')].map(quote).join(' ');
    const terminal = await openTmuxTerminal({
      command: `script -qfe -c ${quote(`${unstuck} > ${quote(join(root, 'scan.json'))}`)} ${quote(recording)}`,
      cwd: root,
      env: cleanEnv({ TERM: 'xterm-256color' }),
    });
    try {
      await terminal.waitFor(/\[exited \d+\]/, { timeoutMs: 60_000 });
      const raw = await readFile(recording, 'utf8');
      assert.ok(!raw.includes('scanning'), raw.slice(0, 300));
      const report = JSON.parse(await readFile(join(root, 'scan.json'), 'utf8')) as { sessions: unknown[] };
      assert.equal(report.sessions.length, 82);
    } finally {
      await terminal.close();
    }
  });
});
