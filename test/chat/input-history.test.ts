import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { appendInputHistory, HISTORY_FILE, loadInputHistory } from '../../src/chat/input-history.js';

let base: string;
before(async () => {
  base = await mkdtemp(join(tmpdir(), 'unstuck-input-history-'));
});
after(async () => {
  await rm(base, { recursive: true, force: true });
});

const lines = (count: number, prefix: string): string =>
  Array.from({ length: count }, (_, index) => `${prefix} ${index + 1}`)
    .join('\n')
    .concat('\n');

describe('the interactive input history is a project file: never followed out, never a FIFO', () => {
  it('keeps the newest 500 lines and appends typed lines to its own regular file', async () => {
    const cwd = join(base, 'plain');
    await mkdir(join(cwd, '.unstuck'), { recursive: true });
    await writeFile(join(cwd, HISTORY_FILE), lines(1200, 'typed'));
    const history = await loadInputHistory(cwd);
    assert.equal(history.length, 500);
    assert.equal(history[0], 'typed 1200');
    await appendInputHistory(cwd, 'one more');
    const kept = (await readFile(join(cwd, HISTORY_FILE), 'utf8')).split('\n').filter((line) => line !== '');
    assert.equal(kept.length, 501);
    assert.equal(kept.at(-1), 'one more');
  });

  it('a shipped .unstuck/history linking to a file outside is neither shortened nor appended to', async () => {
    const cwd = join(base, 'linked');
    const victim = join(base, 'victim-bash-history');
    const original = lines(1200, 'echo user command');
    await writeFile(victim, original);
    await mkdir(join(cwd, '.unstuck'), { recursive: true });
    await symlink(victim, join(cwd, HISTORY_FILE));
    assert.deepEqual(await loadInputHistory(cwd), []);
    await appendInputHistory(cwd, 'typed in the chat');
    assert.equal(await readFile(victim, 'utf8'), original);
  });

  it('a .unstuck that is a link is not read through', async () => {
    const cwd = join(base, 'linked-folder');
    const elsewhere = join(base, 'elsewhere');
    await mkdir(elsewhere);
    const original = lines(1200, 'someone else');
    await writeFile(join(elsewhere, 'history'), original);
    await mkdir(cwd);
    await symlink(elsewhere, join(cwd, '.unstuck'));
    assert.deepEqual(await loadInputHistory(cwd), []);
    await appendInputHistory(cwd, 'typed');
    assert.equal(await readFile(join(elsewhere, 'history'), 'utf8'), original);
  });

  it('a FIFO in its place does not hang the start', {
    skip: process.platform === 'win32' ? 'no FIFOs' : false,
    timeout: 5000,
  }, async () => {
    const cwd = join(base, 'fifo');
    await mkdir(join(cwd, '.unstuck'), { recursive: true });
    execFileSync('mkfifo', [join(cwd, HISTORY_FILE)]);
    assert.deepEqual(await loadInputHistory(cwd), []);
    await appendInputHistory(cwd, 'typed');
  });
});
