import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Tool } from '../../src/agent/index.js';
import { diffLines, previewChange } from '../../src/chat/change-preview.js';
import { createAskingConfirm } from '../../src/chat/create-asking-confirm.js';
import { createTerminalStyle } from '../../src/chat/terminal-style.js';
import { withCallContext } from '../../src/chat/tool-call-context.js';
import { createEmulator } from '../../src/emulator/index.js';
import { cleanEnv, NODE_ARGS, runChatBinary } from './harness/run-chat-binary.js';
import { hasTmux, openTmuxTerminal } from './harness/tmux-terminal.js';

let cwd: string;
before(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'unstuck-chat-previews-'));
});
after(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('what a change will do is shown before it is allowed', () => {
  it('diffs in linear time: common lines left out, each side bounded, controls made visible', () => {
    assert.deepEqual(diffLines('a\nb\nc\n', 'a\nB\nc\n'), ['@@ line 2', '- b', '+ B']);
    assert.deepEqual(diffLines('', 'new\nfile'), ['+ new', '+ file']);
    assert.deepEqual(diffLines('same', 'same'), ['(no change)']);
    const long = Array.from({ length: 30 }, (_, index) => `line ${index}`).join('\n');
    const shown = diffLines('', long);
    assert.equal(shown.length, 9);
    assert.equal(shown.at(-1), '+ ... 22 more lines');
    assert.deepEqual(diffLines('', '\x1b[31mred'), ['+ \\x1b[31mred']);
  });

  it('each call of a block sees its own arguments in the question', async () => {
    await writeFile(join(cwd, 'existing.txt'), 'one\ntwo\nthree\n');
    const asked: string[] = [];
    const confirm = createAskingConfirm({
      ask: async (text) => {
        asked.push(text);
        return 'y';
      },
      style: createTerminalStyle(false),
      hold: () => undefined,
      release: () => undefined,
      preview: (call) => previewChange(call, cwd),
    });
    const writer = (name: string): Tool => ({
      name,
      description: '',
      parameters: {},
      run: async (_args, { signal }) => String(await confirm({ tool: name, action: 'change' }, signal)),
    });
    const [write, edit] = withCallContext([writer('write_file'), writer('edit_file')]);
    const signal = new AbortController().signal;
    await Promise.all([
      write!.run({ path: 'existing.txt', content: 'one\n2\nthree\n' }, { signal }),
      edit!.run({ path: 'x', old_text: 'foo', new_text: 'bar\nbaz' }, { signal }),
    ]);
    assert.deepEqual(asked, [
      '    @@ line 2\n    - two\n    + 2\nAllow write_file: change? [y]es / [n]o / [a]lways ',
      '    - foo\n    + bar\n    + baz\nAllow edit_file: change? [y]es / [n]o / [a]lways ',
    ]);
  });

  it('the chat shows the diff before asking, a preview of tool output after, and /output the whole of it', {
    skip: hasTmux() ? false : 'tmux is not installed',
  }, async () => {
    const dir = await mkdtemp(join(cwd, 'tty-'));
    await writeFile(join(dir, 'poem.txt'), 'roses are red\nviolets are blue\n');
    const lines = Array.from({ length: 12 }, (_, index) => `row ${index + 1}`).join('\n');
    await writeFile(join(dir, 'rows.txt'), `${lines}\n`);
    const emulator = createEmulator({
      profile: 'deepseek',
      script: [
        // Read first: an overwrite of a file the model has not read is refused.
        { toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ path: 'poem.txt' }) }] },
        {
          toolCalls: [
            {
              name: 'write_file',
              arguments: JSON.stringify({ path: 'poem.txt', content: 'roses are red\nviolets are green\n' }),
            },
          ],
        },
        { toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ path: 'rows.txt' }) }] },
        { text: 'Done.' },
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
      height: 60,
    });
    try {
      await terminal.waitFor(/^>$/m);
      await terminal.type('fix the poem, then read the rows');
      await terminal.waitFor(
        / {4}@@ line 2\n {4}- violets are blue\n {4}\+ violets are green\nAllow write_file: overwrite poem\.txt \(\d+ bytes\)\? \[y\]es \/ \[n\]o \/ \[a\]lways$/,
      );
      await terminal.type('y');
      const screen = await terminal.waitFor(/Done\.\n>$/);
      assert.match(
        screen,
        /\[done\] read_file: \d+ lines\n {4}\| .*row 1\n(.|\n)*more lines \(\/output shows them all\)\n(.|\n)*row 12/,
      );
      assert.equal(await readFile(join(dir, 'poem.txt'), 'utf8'), 'roses are red\nviolets are green\n');
      const before = (await terminal.screen()).length;
      await terminal.type('/output');
      const all = await terminal.waitFor(/row 12\n>$/, { after: before });
      for (let index = 1; index <= 12; index += 1) assert.match(all.slice(before), new RegExp(`row ${index}\\b`));
      // The input history is the person's own: 0600 in a 0700 folder.
      assert.equal((await stat(join(dir, '.unstuck', 'history'))).mode & 0o777, 0o600);
      assert.equal((await stat(join(dir, '.unstuck'))).mode & 0o777, 0o700);
    } finally {
      await terminal.close();
      await server.close();
    }
  });

  it('-p: a script reading stderr gets the call lines only; --full-output shows each result whole', async () => {
    const dir = await mkdtemp(join(cwd, 'one-shot-'));
    await writeFile(
      join(dir, 'rows.txt'),
      `${Array.from({ length: 12 }, (_, index) => `row ${index + 1}`).join('\n')}\n`,
    );
    const emulator = createEmulator({
      profile: 'deepseek',
      script: [
        { toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ path: 'rows.txt' }) }] },
        { text: 'ok' },
        { toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ path: 'rows.txt' }) }] },
        { text: 'ok' },
      ],
    });
    const server = await emulator.listen();
    try {
      const args = ['chat', '--base-url', server.url, '--profile', 'deepseek', '-p', 'read'];
      const quiet = await runChatBinary(args, { cwd: dir, env: cleanEnv({ OPENAI_API_KEY: 'sk-test' }) });
      assert.equal(quiet.code, 0, quiet.stderr);
      assert.doesNotMatch(quiet.stderr, /row 1/);
      const full = await runChatBinary([...args, '--full-output'], {
        cwd: dir,
        env: cleanEnv({ OPENAI_API_KEY: 'sk-test' }),
      });
      assert.equal(full.code, 0, full.stderr);
      for (let index = 1; index <= 12; index += 1) assert.match(full.stderr, new RegExp(`\\| .*row ${index}\\b`));
    } finally {
      await server.close();
    }
  });
});
