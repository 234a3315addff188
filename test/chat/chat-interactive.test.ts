import assert from 'node:assert/strict';
import { access, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { check } from '../../src/core/index.js';
import type { Emulator } from '../../src/emulator/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import { createTranscriptStore } from '../../src/session/index.js';
import { cleanEnv, NODE_ARGS } from './harness/run-chat-binary.js';
import { hasTmux, openTmuxTerminal } from './harness/tmux-terminal.js';

let cwd: string;
let emulator: Emulator;
let server: { url: string; close(): Promise<void> };

before(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'unstuck-chat-tty-'));
  emulator = createEmulator({
    profile: 'deepseek',
    script: [
      { text: 'Hello! Ask me anything.', stream: { chunkSize: 4, delayMs: 5 } },
      { toolCalls: [{ name: 'run_command', arguments: JSON.stringify({ command: 'sleep 1 && touch late.txt' }) }] },
      { text: 'Still here after the abort.' },
    ],
  });
  server = await emulator.listen();
});

after(async () => {
  await server.close();
  await rm(cwd, { recursive: true, force: true });
});

const command = (args: string[]): string =>
  [process.execPath, ...NODE_ARGS, 'chat', ...args].map((part) => `'${part}'`).join(' ');

describe('unstuck chat in a terminal (tmux)', {
  skip: hasTmux() ? false : 'tmux is not installed (apt-get install tmux)',
}, () => {
  it('runs a turn, aborts a turn in the middle of a tool with Ctrl-C, and resumes the session intact', async () => {
    const env = cleanEnv({ OPENAI_API_KEY: 'sk-test', TERM: 'xterm-256color', NO_COLOR: '1' });
    const first = await openTmuxTerminal({
      command: command(['--base-url', server.url, '--profile', 'deepseek']),
      cwd,
      env,
    });
    let sessionId: string;
    let abortedAt = 0;
    try {
      const opening = await first.waitFor(/new session (\S+) · deepseek-chat at http/);
      sessionId = /new session (\S+) ·/.exec(opening)?.[1] ?? '';
      await first.waitFor(/^>$/m);

      await first.type('hello');
      await first.waitFor(/Hello! Ask me anything\.\n>$/);

      await first.type('run the slow thing');
      await first.waitFor(/Allow run_command: run: sleep 1 && touch late\.txt\? \[y\]es \/ \[n\]o \/ \[a\]lways$/);
      await first.type('y');
      await first.waitFor(/running run_command/);
      await first.keys('C-c');
      abortedAt = Date.now();
      const aborted = await first.waitFor(/\(turn aborted; the session is kept\)\n>$/);
      assert.match(aborted, /\[failed\] run_command: cancelled: the turn was aborted/);

      // The Ctrl-C that aborted the turn was the first: a second one leaves.
      await first.keys('C-c');
      await first.waitFor(/\[exited 130\]/);
      assert.doesNotMatch(await first.screen(), /press Ctrl-C again/);
    } finally {
      await first.close();
    }

    // The session on disk is whole: the aborted call has its (cancelled) result and nothing is invalid.
    const stored = await createTranscriptStore(join(cwd, '.unstuck', 'sessions', `${sessionId}.md`)).load();
    assert.deepEqual(stored.problems, []);
    assert.deepEqual(check(stored.messages, { profile: 'deepseek', model: 'deepseek-chat' }), []);
    assert.deepEqual(
      stored.messages.map((message) => message.role),
      ['user', 'assistant', 'user', 'assistant', 'tool'],
    );

    const second = await openTmuxTerminal({
      command: command(['--base-url', server.url, '--profile', 'deepseek', '--resume']),
      cwd,
      env,
    });
    try {
      await second.waitFor(
        new RegExp(
          `resumed session ${sessionId} \\(5 messages\\).*\\n {2}you: run the slow thing\\n {2}model: Hello! Ask me anything\\.\\n>$`,
        ),
      );
      await second.waitFor(/^>$/m);
      await second.type('are you there?');
      await second.waitFor(/Still here after the abort\.\n>$/);
      await second.type('/sessions');
      await second.waitFor(new RegExp(`\\* ${sessionId}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d +[\\d.]+ KB  hello\\n>$`));
      // Input history survives the restart (answers to questions are not in it): Up, Up, Up recalls the first run's prompt.
      await second.keys('Up', 'Up', 'Up');
      await second.waitFor(/\n> run the slow thing$/);
      await second.keys('C-u');
      await second.type('/new');
      const fresh = await second.waitFor(/\nnew session (\S+) · \/help for commands\n>$/);
      assert.notEqual(/\nnew session (\S+) ·/.exec(fresh)?.[1], sessionId);
      await second.type(`/resume ${sessionId.slice(0, 15)}`);
      await second.waitFor(
        new RegExp(
          `\\nresumed session ${sessionId} \\(7 messages\\) · /help for commands\\n {2}you: are you there\\?\\n {2}model: Still here after the abort\\.\\n>$`,
        ),
      );
      // At an idle prompt the first Ctrl-C only says how to leave.
      await second.keys('C-c');
      await second.waitFor(/\(press Ctrl-C again to leave, or type \/exit\)\n>$/);
      await second.type('/exit');
      await second.waitFor(/\[exited 0\]/);
    } finally {
      await second.close();
    }

    assert.deepEqual(
      emulator.requests.map((request) => request.status),
      [200, 200, 200],
    );
    const last = emulator.requests[2]?.body as { messages: { role: string; content: string }[] };
    assert.deepEqual(
      last.messages.map((message) => message.role),
      ['system', 'user', 'assistant', 'user', 'assistant', 'tool', 'user'],
    );
    // The aborted command was stopped with the turn: well after it would have, it has not written its file.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, abortedAt + 1500 - Date.now())));
    await assert.rejects(access(join(cwd, 'late.txt')));
    assert.deepEqual(
      (await readdir(join(cwd, '.unstuck', 'sessions'))).filter((name) => name.endsWith('.md')),
      [`${sessionId}.md`],
    );
  });
});

describe('unstuck chat colours in a terminal (tmux)', {
  skip: hasTmux() ? false : 'tmux is not installed (apt-get install tmux)',
}, () => {
  it('dims the reasoning and marks tool calls when colour is allowed, and stays plain with NO_COLOR', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'unstuck-chat-colour-'));
    const colourful = createEmulator({
      profile: 'deepseek',
      thinking: true,
      script: [
        { reasoning: 'Look at the folder first.', toolCalls: [{ name: 'list_directory', arguments: '{}' }] },
        { reasoning: 'Empty.', text: 'The folder is empty.' },
        { reasoning: 'Again.', text: 'Still empty.' },
      ],
    });
    const colourServer = await colourful.listen();
    const args = ['--base-url', colourServer.url, '--profile', 'deepseek', '--thinking'];
    try {
      const tty = await openTmuxTerminal({
        command: command(args),
        cwd: dir,
        env: cleanEnv({ OPENAI_API_KEY: 'sk-test', TERM: 'xterm-256color' }),
      });
      try {
        await tty.waitFor(/^>$/m);
        await tty.type('what is here?');
        await tty.waitFor(/The folder is empty\.\n>$/);
        const screen = await tty.screen({ escapes: true });
        assert.match(screen, /\x1b\[2mLook at the folder first\./);
        assert.match(screen, /⚙ list_directory/);
        assert.match(screen, / {2}✓ list_directory: \.unstuck\//);
      } finally {
        await tty.close();
      }
      const plain = await openTmuxTerminal({
        command: command(args),
        cwd: dir,
        env: cleanEnv({ OPENAI_API_KEY: 'sk-test', TERM: 'xterm-256color', NO_COLOR: '1' }),
      });
      try {
        await plain.waitFor(/^>$/m);
        await plain.type('and now?');
        await plain.waitFor(/Still empty\.\n>$/);
        const screen = await plain.screen({ escapes: true });
        assert.match(screen, /thinking: Again\.\nStill empty\./);
        assert.doesNotMatch(screen, /\x1b\[2m/);
      } finally {
        await plain.close();
      }
    } finally {
      await colourServer.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('unstuck chat -p in a terminal (tmux)', {
  skip: hasTmux() ? false : 'tmux is not installed (apt-get install tmux)',
}, () => {
  it('asks before a change when a person is there, and answers on stdout', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'unstuck-chat-ask-'));
    const asking = createEmulator({
      profile: 'deepseek',
      script: [
        { toolCalls: [{ name: 'write_file', arguments: '{"path":"made.txt","content":"yes"}' }] },
        { text: 'Written.' },
      ],
    });
    const askingServer = await asking.listen();
    try {
      const tty = await openTmuxTerminal({
        command: command(['--base-url', askingServer.url, '--profile', 'deepseek', '-p', 'make a file']),
        cwd: dir,
        env: cleanEnv({ OPENAI_API_KEY: 'sk-test', TERM: 'xterm-256color', NO_COLOR: '1' }),
      });
      try {
        await tty.waitFor(
          /\[tool\] write_file path="made\.txt" content="yes"\n {4}\+ yes\nAllow write_file: create made\.txt \(3 bytes\)\? \[y\]es \/ \[n\]o \/ \[a\]lways$/,
        );
        await tty.type('y');
        await tty.waitFor(
          / \[a\]lways y\n {2}\[done\] write_file: wrote 3 bytes to made\.txt\nWritten\.\n\[exited 0\]$/,
        );
      } finally {
        await tty.close();
      }
      assert.equal(await readFile(join(dir, 'made.txt'), 'utf8'), 'yes');
    } finally {
      await askingServer.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
