import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAskingConfirm } from '../../src/cli/chat/create-asking-confirm.js';
import { createTerminalStyle } from '../../src/cli/chat/terminal-style.js';

describe('createAskingConfirm', () => {
  it('asks one question at a time, in call order, holding the renderer meanwhile', async () => {
    const log: string[] = [];
    const answers = ['y', 'no'];
    const confirm = createAskingConfirm({
      ask: async (text) => {
        log.push(`ask ${text.trim()}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        return answers.shift() ?? '';
      },
      style: createTerminalStyle(false),
      hold: () => void log.push('hold'),
      release: () => void log.push('release'),
    });
    const signal = new AbortController().signal;
    const results = await Promise.all([confirm({ tool: 'write_file', action: 'create a' }, signal), confirm({ tool: 'run_command', action: 'run: ls' }, signal)]);
    assert.deepEqual(results, [true, false]);
    assert.deepEqual(log, ['hold', 'ask Allow write_file: create a? [y]es / [n]o / [a]lways', 'release', 'hold', 'ask Allow run_command: run: ls? [y]es / [n]o / [a]lways', 'release']);
  });

  it('stops asking after "always", and declines without asking once the turn is aborted', async () => {
    let asked = 0;
    const confirm = createAskingConfirm({ ask: async () => (asked += 1, 'a'), style: createTerminalStyle(false), hold: () => undefined, release: () => undefined });
    const signal = new AbortController().signal;
    assert.equal(await confirm({ tool: 'write_file', action: 'x' }, signal), true);
    assert.equal(await confirm({ tool: 'write_file', action: 'y' }, signal), true);
    assert.equal(asked, 1);

    const fresh = createAskingConfirm({ ask: async () => 'y', style: createTerminalStyle(false), hold: () => undefined, release: () => undefined });
    const controller = new AbortController();
    controller.abort();
    assert.equal(await fresh({ tool: 'write_file', action: 'z' }, controller.signal), false);
  });
});
