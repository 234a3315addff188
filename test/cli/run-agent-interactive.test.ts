import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cleanEnv, NODE_ARGS } from '../chat/harness/run-chat-binary.js';
import { hasTmux, openTmuxTerminal } from '../chat/harness/tmux-terminal.js';

/**
 * `unstuck run` on a real terminal (tmux): the agent gets the terminal, a window resize reaches
 * it, a Ctrl-C typed there reaches it exactly once (from the terminal, not passed on a second time
 * by us), and the exit code the shell sees is the agent's.
 */
const FAKE_AGENT = fileURLToPath(new URL('../fixtures/run/fake-agent.mjs', import.meta.url));
let cwd: string;
before(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'unstuck-run-tty-'));
});
after(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('unstuck run on a terminal (tmux)', {
  skip: hasTmux() ? false : 'tmux is not installed (apt-get install tmux)',
}, () => {
  it('the agent has the terminal; a resize and one Ctrl-C reach it; its exit code is ours', async () => {
    // `set -m`: the shell runs the command as a job of its own, in the terminal's foreground, as a
    // user's interactive shell does (else Ctrl-C would reach the shell of the pane as well).
    const command = `set -m; ${[
      process.execPath,
      ...NODE_ARGS,
      'run',
      '--agent',
      'claude',
      '--',
      process.execPath,
      FAKE_AGENT,
    ]
      .concat('interactive')
      .map((part) => `'${part}'`)
      .join(' ')}`;
    const terminal = await openTmuxTerminal({
      command,
      cwd,
      env: cleanEnv({ TERM: 'xterm-256color' }),
      width: 100,
      height: 30,
    });
    try {
      await terminal.waitFor(/\{"tty":true,"size":"100x30"\}/, { timeoutMs: 20_000 });
      await terminal.resize(90, 25);
      await terminal.waitFor(/\{"resized":"90x25"\}/);
      await terminal.keys('C-c');
      const screen = await terminal.waitFor(/\[exited \d+\]/);
      assert.match(screen, /\{"interrupted":1\}/);
      assert.ok(!screen.includes('"interrupted":2'), `Ctrl-C reached the agent twice:\n${screen}`);
      assert.match(screen, /\[exited 41\]/, 'the exit code is the agent’s');
    } finally {
      await terminal.close();
    }
  });
});
