import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSearchTextTool } from '../../src/chat/tools/search-text-tool.js';
import { createEmulator } from '../../src/emulator/index.js';
import { cleanEnv, NODE_ARGS } from './harness/run-chat-binary.js';
import { hasTmux, openTmuxTerminal } from './harness/tmux-terminal.js';

/** `(a+)+$` against forty a's and a `!`: about 2^40 steps of backtracking in V8's engine. */
const EVIL = '(a+)+$';
const VICTIM = `${'a'.repeat(40)}!\n`;

let cwd: string;
before(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'unstuck-chat-regex-'));
  await writeFile(join(cwd, 'victim.txt'), VICTIM);
  await writeFile(join(cwd, 'plain.txt'), 'aaa\nbbb\n');
});
after(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('search_text with a catastrophic regular expression', () => {
  it('stops it at the time limit with one sentence, and the event loop keeps running meanwhile', async () => {
    const tool = createSearchTextTool(cwd, { regexTimeLimitMs: 400 });
    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 20);
    const started = Date.now();
    try {
      await assert.rejects(
        tool.run({ pattern: EVIL, regex: true }, { signal: new AbortController().signal }),
        /the regular expression ran for more than 400 ms and was stopped/,
      );
    } finally {
      clearInterval(ticker);
    }
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
    assert.ok(ticks >= 10, `the event loop ticked only ${ticks} times`);
    // A harmless pattern still works, through the same worker path.
    assert.equal(
      await tool.run({ pattern: '^b+$', regex: true }, { signal: new AbortController().signal }),
      'plain.txt:2: bbb',
    );
  });

  it('stops it at once when the turn is aborted', async () => {
    const tool = createSearchTextTool(cwd);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    await assert.rejects(
      tool.run({ pattern: EVIL, regex: true }, { signal: controller.signal }),
      /stopped: the turn was aborted/,
    );
    assert.ok(Date.now() - started < 1500, `took ${Date.now() - started} ms`);
  });

  it("unstuck chat -p ends on the first SIGTERM while the model's regex runs", async () => {
    const dir = join(cwd, 'sigterm');
    await mkdir(dir);
    await writeFile(join(dir, 'victim.txt'), VICTIM);
    const emulator = createEmulator({
      profile: 'deepseek',
      script: [
        { toolCalls: [{ name: 'search_text', arguments: JSON.stringify({ pattern: EVIL, regex: true }) }] },
        { text: 'never' },
      ],
    });
    const server = await emulator.listen();
    try {
      const child = spawn(
        process.execPath,
        [...NODE_ARGS, 'chat', '--base-url', server.url, '--profile', 'deepseek', '-p', 'search'],
        { cwd: dir, env: cleanEnv({ OPENAI_API_KEY: 'sk-test' }), stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      await new Promise<void>((resolve) => {
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString('utf8');
          if (stderr.includes('search_text')) resolve();
        });
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const sentAt = Date.now();
      child.kill('SIGTERM');
      const timeout = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timeout);
      assert.ok(
        Date.now() - sentAt < 4000,
        `exited ${Date.now() - sentAt} ms after SIGTERM (code ${code}); stderr: ${stderr}`,
      );
      assert.notEqual(code, null, 'it had to be killed');
    } finally {
      await server.close();
    }
  });

  it('in the terminal the first Ctrl-C aborts the turn and the second leaves', {
    skip: hasTmux() ? false : 'tmux is not installed',
  }, async () => {
    const dir = join(cwd, 'ctrl-c');
    await mkdir(dir);
    await writeFile(join(dir, 'victim.txt'), VICTIM);
    const emulator = createEmulator({
      profile: 'deepseek',
      script: [
        { toolCalls: [{ name: 'search_text', arguments: JSON.stringify({ pattern: EVIL, regex: true }) }] },
        { text: 'never' },
      ],
    });
    const server = await emulator.listen();
    const command = [process.execPath, ...NODE_ARGS, 'chat', '--base-url', server.url, '--profile', 'deepseek']
      .map((part) => `'${part}'`)
      .join(' ');
    const terminal = await openTmuxTerminal({
      command,
      cwd: dir,
      env: cleanEnv({ OPENAI_API_KEY: 'sk-test', TERM: 'xterm-256color', NO_COLOR: '1' }),
    });
    try {
      await terminal.waitFor(/^>$/m);
      await terminal.type('search for it');
      await terminal.waitFor(/search_text/);
      await new Promise((resolve) => setTimeout(resolve, 500));
      await terminal.keys('C-c');
      await terminal.waitFor(/\(turn aborted; the session is kept\)\n>$/, { timeoutMs: 4000 });
      await terminal.keys('C-c');
      await terminal.waitFor(/\[exited 130\]/, { timeoutMs: 5000 });
    } finally {
      await terminal.close();
      await server.close();
    }
  });
});
