import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSessionDirectory } from '../../src/chat/session-directory.js';

let cwd: string;
before(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'unstuck-chat-sessions-'));
});
after(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('the sessions directory', () => {
  it('closes an existing .unstuck and its sessions folder made 0755 by an older version, and adds a .gitignore', async () => {
    const dir = await mkdtemp(join(cwd, 'old-'));
    await mkdir(join(dir, '.unstuck', 'sessions'), { recursive: true, mode: 0o755 });
    await chmod(join(dir, '.unstuck'), 0o755);
    await chmod(join(dir, '.unstuck', 'sessions'), 0o755);
    await createSessionDirectory(dir).select({ kind: 'new' });
    assert.equal((await stat(join(dir, '.unstuck'))).mode & 0o777, 0o700);
    assert.equal((await stat(join(dir, '.unstuck', 'sessions'))).mode & 0o777, 0o700);
    assert.equal(await readFile(join(dir, '.unstuck', '.gitignore'), 'utf8'), '*\n');
  });

  it('makes ids that sort by time', () => {
    const sessions = createSessionDirectory(cwd, {
      now: () => new Date('2026-11-30T03:04:05.678Z'),
      random: () => 'beef',
    });
    assert.equal(sessions.createId(), '20261130-030405-beef');
    assert.equal(sessions.pathOf('20261130-030405-beef'), join(cwd, '.unstuck', 'sessions', '20261130-030405-beef.md'));
    assert.throws(() => sessions.pathOf('../escape'), /not a session id/);
  });

  it('lists sessions newest first, leaving out segment and temporary files, and finds one by prefix', async () => {
    const sessions = createSessionDirectory(cwd);
    assert.deepEqual(await sessions.list(), []);
    await assert.rejects(sessions.find(), /no session to resume/);
    await sessions.ensure();
    const dir = join(cwd, '.unstuck', 'sessions');
    await writeFile(join(dir, '20261129-100000-aaaa.md'), 'old');
    await writeFile(join(dir, '20261130-100000-bbbb.md'), 'new');
    await writeFile(join(dir, '20261130-100000-bbbb.seg-0123456789abcdef.md'), 'segment');
    await writeFile(join(dir, '.20261130-100000-bbbb.md.tmp-1-00000000'), 'temporary');
    await writeFile(join(dir, '20261130-100000-bbbb.md.lock'), 'lock');
    await mkdir(join(dir, 'folder.md'));
    await utimes(
      join(dir, '20261129-100000-aaaa.md'),
      new Date('2026-11-29T10:00:00Z'),
      new Date('2026-11-29T10:00:00Z'),
    );
    await utimes(
      join(dir, '20261130-100000-bbbb.md'),
      new Date('2026-11-30T10:00:00Z'),
      new Date('2026-11-30T10:00:00Z'),
    );
    assert.deepEqual(
      (await sessions.list()).map((entry) => entry.id),
      ['20261130-100000-bbbb', '20261129-100000-aaaa'],
    );
    assert.equal((await sessions.find()).id, '20261130-100000-bbbb');
    assert.equal((await sessions.find('20261129')).id, '20261129-100000-aaaa');
    await assert.rejects(sessions.find('2026'), /ambiguous/);
    await assert.rejects(sessions.find('nope'), /no session 'nope'/);
  });

  it('refuses a .unstuck/sessions that is a symbolic link: the linked folder is neither made 0700 nor written or listed', async () => {
    const dir = await mkdtemp(join(cwd, 'linked-'));
    const victim = await mkdtemp(join(cwd, 'victim-'));
    await chmod(victim, 0o755);
    await writeFile(join(victim, '20261130-100000-cccc.md'), 'not a session');
    await mkdir(join(dir, '.unstuck'));
    await symlink(victim, join(dir, '.unstuck', 'sessions'));
    const sessions = createSessionDirectory(dir);
    await assert.rejects(
      sessions.select({ kind: 'new' }),
      /is a symbolic link; refusing to keep or read sessions through it/,
    );
    await assert.rejects(sessions.find(), /is a symbolic link/);
    assert.equal((await stat(victim)).mode & 0o777, 0o755);
    assert.deepEqual(await readdir(victim), ['20261130-100000-cccc.md']);
  });
});
