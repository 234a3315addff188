import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { watch } from 'node:fs';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Tool } from '../../src/agent/index.js';
import { createBuiltinTools } from '../../src/chat/tools/builtin-tools.js';
import type { Confirm } from '../../src/chat/tools/confirm.js';
import { allowAll } from '../../src/chat/tools/confirm.js';
import { createFileLedger } from '../../src/chat/tools/file-ledger.js';

let base: string;
const signal = new AbortController().signal;
const NOT_READ = /has not been read yet in this session\. Read it first with read_file before writing to it\./;
const MODIFIED =
  /has been modified since it was last read, either by the user, by a command or by another program\. Read it again with read_file before attempting to write it\./;

/** A fresh working directory and one chat's tools in it (one file ledger, as in a chat). */
async function workspace(confirm: Confirm = allowAll): Promise<{ root: string; tools: Record<string, Tool> }> {
  const root = await mkdtemp(join(base, 'ws-'));
  const tools = Object.fromEntries(
    createBuiltinTools({ root, confirm, env: { PATH: process.env.PATH } }).map((tool) => [tool.name, tool]),
  );
  return { root, tools };
}

/** Resolves with the promise's error, or fails the test when it has not settled within `ms` (a hang). */
async function settlesWithin<T>(promise: Promise<T>, ms: number, what: string): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>(
    (_, reject) =>
      (timer = setTimeout(() => reject(new Error(`${what} did not return within ${ms} ms (it hangs)`)), ms)),
  );
  try {
    return await Promise.race([
      promise.then(
        () => undefined,
        (error: unknown) => error,
      ),
      hang,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

before(async () => {
  base = await mkdtemp(join(tmpdir(), 'unstuck-file-tools-'));
});
after(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('the built-in tools declare what they touch', () => {
  it('read_file, list_directory, search_text are read-only; write_file, edit_file, run_command have side effects', async () => {
    const { tools } = await workspace();
    const declared = Object.fromEntries(Object.values(tools).map((tool) => [tool.name, tool.readOnly === true]));
    assert.deepEqual(declared, {
      read_file: true,
      list_directory: true,
      search_text: true,
      write_file: false,
      edit_file: false,
      run_command: false,
    });
  });
});

describe('no blind edits', () => {
  it('edit_file and an overwriting write_file refuse a file never read in this chat; creating a new file is fine', async () => {
    const { root, tools } = await workspace();
    await writeFile(join(root, 'a.txt'), 'alpha\n');
    await assert.rejects(
      tools.edit_file!.run({ path: 'a.txt', old_text: 'alpha', new_text: 'beta' }, { signal }),
      NOT_READ,
    );
    await assert.rejects(tools.write_file!.run({ path: 'a.txt', content: 'new' }, { signal }), NOT_READ);
    assert.equal(await readFile(join(root, 'a.txt'), 'utf8'), 'alpha\n');
    assert.equal(
      await tools.write_file!.run({ path: 'b.txt', content: 'fresh' }, { signal }),
      'wrote 5 bytes to b.txt',
    );
    // What the model wrote it knows: it may edit it next without reading it first.
    assert.equal(
      await tools.edit_file!.run({ path: 'b.txt', old_text: 'fresh', new_text: 'fresher' }, { signal }),
      'edited b.txt at line 1',
    );
    assert.equal(
      await tools.write_file!.run({ path: 'b.txt', content: 'third' }, { signal }),
      'wrote 5 bytes to b.txt',
    );
    assert.equal(await readFile(join(root, 'b.txt'), 'utf8'), 'third');
  });

  it("an edit after the file was changed behind the model's back is refused and the file untouched; after a new read it goes through", async () => {
    const { root, tools } = await workspace();
    const file = join(root, 'notes.txt');
    await writeFile(file, 'one\ntwo\n');
    await tools.read_file!.run({ path: 'notes.txt' }, { signal });
    await writeFile(file, 'one\ntwo\nthree (the user)\n');
    await assert.rejects(
      tools.edit_file!.run({ path: 'notes.txt', old_text: 'two', new_text: '2' }, { signal }),
      MODIFIED,
    );
    await assert.rejects(tools.write_file!.run({ path: 'notes.txt', content: 'replaced' }, { signal }), MODIFIED);
    assert.equal(await readFile(file, 'utf8'), 'one\ntwo\nthree (the user)\n');
    await tools.read_file!.run({ path: 'notes.txt', offset: 1, limit: 1 }, { signal });
    assert.equal(
      await tools.edit_file!.run({ path: 'notes.txt', old_text: 'two', new_text: '2' }, { signal }),
      'edited notes.txt at line 2',
    );
    assert.equal(await readFile(file, 'utf8'), 'one\n2\nthree (the user)\n');
  });

  it('a file changed by run_command in between is refused the same way', async () => {
    const { root, tools } = await workspace();
    await writeFile(join(root, 'c.txt'), 'keep\n');
    await tools.read_file!.run({ path: 'c.txt' }, { signal });
    assert.match(
      await tools.run_command!.run({ command: 'printf "added by a command\\n" >> c.txt' }, { signal }),
      /^exit code 0/,
    );
    await assert.rejects(
      tools.edit_file!.run({ path: 'c.txt', old_text: 'keep', new_text: 'lost' }, { signal }),
      MODIFIED,
    );
    assert.equal(await readFile(join(root, 'c.txt'), 'utf8'), 'keep\nadded by a command\n');
  });

  it('a change of the same size with the old mtime put back is still caught (content decides, not the timestamp)', async () => {
    const { root, tools } = await workspace();
    const file = join(root, 'd.txt');
    await writeFile(file, 'abc\n');
    await tools.read_file!.run({ path: 'd.txt' }, { signal });
    const { atime, mtime } = await stat(file);
    await writeFile(file, 'xyz\n');
    await utimes(file, atime, mtime);
    await assert.rejects(tools.write_file!.run({ path: 'd.txt', content: 'mine' }, { signal }), MODIFIED);
    assert.equal(await readFile(file, 'utf8'), 'xyz\n');
  });

  it('a touched file whose content is the same is not refused (no false refusal from a timestamp)', async () => {
    const { root, tools } = await workspace();
    const file = join(root, 'e.txt');
    await writeFile(file, 'same\n');
    await tools.read_file!.run({ path: 'e.txt' }, { signal });
    await utimes(file, new Date(Date.now() + 60_000), new Date(Date.now() + 60_000));
    await writeFile(file, 'same\n');
    assert.equal(
      await tools.edit_file!.run({ path: 'e.txt', old_text: 'same', new_text: 'new' }, { signal }),
      'edited e.txt at line 1',
    );
  });

  it("the ledger's fast path trusts a status only when it cannot hide a change: an old record with a same-size change is caught by ctime", async () => {
    const root = await mkdtemp(join(base, 'ledger-'));
    const file = join(root, 'f.txt');
    await writeFile(file, 'abc\n');
    const ledger = createFileLedger();
    // Recorded "long after" the file's last change: the status alone may vouch for it.
    ledger.remember(file, Buffer.from('abc\n'), { stat: await stat(file), recordedAt: Date.now() + 10_000 });
    await ledger.assertUnchanged(file, 'f.txt');
    const { atime, mtime } = await stat(file);
    await writeFile(file, 'xyz\n');
    await utimes(file, atime, mtime);
    await assert.rejects(ledger.assertUnchanged(file, 'f.txt'), MODIFIED);
    // A status that moved but a content that did not: accepted (the digest decides).
    await writeFile(file, 'abc\n');
    await ledger.assertUnchanged(file, 'f.txt');
  });
});

describe("writes of the user's files", () => {
  it("keep the file's mode (0600 stays private, 0755 stays executable) and leave no temporary file", async () => {
    const { root, tools } = await workspace();
    for (const [name, mode] of [
      ['private.txt', 0o600],
      ['script.sh', 0o755],
    ] as const) {
      await writeFile(join(root, name), 'before\n');
      await chmod(join(root, name), mode);
      await tools.read_file!.run({ path: name }, { signal });
      await tools.write_file!.run({ path: name, content: 'after\n' }, { signal });
      assert.equal((await stat(join(root, name))).mode & 0o777, mode, name);
      await tools.edit_file!.run({ path: name, old_text: 'after', new_text: 'edited' }, { signal });
      assert.equal((await stat(join(root, name))).mode & 0o777, mode, name);
      assert.equal(await readFile(join(root, name), 'utf8'), 'edited\n');
    }
    assert.deepEqual((await readdir(root)).sort(), ['private.txt', 'script.sh']);
  });

  it('write through a symbolic link inside the workspace to its target, and keep the link', async () => {
    const { root, tools } = await workspace();
    await writeFile(join(root, 'target.txt'), 'old\n');
    await symlink('target.txt', join(root, 'link.txt'));
    await tools.read_file!.run({ path: 'link.txt' }, { signal });
    await tools.write_file!.run({ path: 'link.txt', content: 'new\n' }, { signal });
    assert.equal((await lstat(join(root, 'link.txt'))).isSymbolicLink(), true);
    assert.equal(await readlink(join(root, 'link.txt')), 'target.txt');
    assert.equal(await readFile(join(root, 'target.txt'), 'utf8'), 'new\n');
  });

  it("never follow a dangling symbolic link out of the workspace (today's write created the file outside)", async () => {
    const { root, tools } = await workspace();
    const outside = await mkdtemp(join(base, 'outside-'));
    await symlink(join(outside, 'planted.txt'), join(root, 'innocent.txt'));
    const error = await settlesWithin(
      tools.write_file!.run({ path: 'innocent.txt', content: 'x' }, { signal }),
      5000,
      'write_file',
    );
    assert.ok(error instanceof Error, 'refused');
    assert.match(
      error.message,
      /innocent.txt is a symbolic link whose target does not exist or is outside the working directory; it is not followed/,
    );
    await symlink(join(outside, 'missing-dir'), join(root, 'folder-link'));
    await assert.rejects(
      tools.write_file!.run({ path: 'folder-link/x.txt', content: 'x' }, { signal }),
      /folder-link\/x\.txt: a part of the path is a file or a symbolic link that leads nowhere, not a directory/,
    );
    assert.deepEqual(await readdir(outside), []);
  });

  it('refuse a target that is not a regular file: a directory, a FIFO (without blocking)', async () => {
    const { root, tools } = await workspace();
    await mkdir(join(root, 'dir'));
    await assert.rejects(tools.write_file!.run({ path: 'dir', content: 'x' }, { signal }), /is a directory/);
    execFileSync('mkfifo', [join(root, 'pipe')]);
    const error = await settlesWithin(
      tools.write_file!.run({ path: 'pipe', content: 'x' }, { signal }),
      5000,
      'write_file to a FIFO',
    );
    assert.match((error as Error).message, /not a regular file/);
    assert.equal((await lstat(join(root, 'pipe'))).isFIFO(), true);
  });

  it('say plainly when a part of the path is a file', async () => {
    const { root, tools } = await workspace();
    await writeFile(join(root, 'plain.txt'), 'x');
    await assert.rejects(
      tools.write_file!.run({ path: 'plain.txt/child.txt', content: 'y' }, { signal }),
      /^Error: plain\.txt\/child\.txt: a part of the path is a file, not a directory$/,
    );
  });

  it('edit_file refuses a file that is not valid UTF-8 rather than rewrite its other bytes', async () => {
    const { root, tools } = await workspace();
    const bytes = Buffer.concat([Buffer.from('name = '), Buffer.from([0xe9]), Buffer.from('\nvalue = 1\n')]);
    await writeFile(join(root, 'latin1.txt'), bytes);
    await tools.read_file!.run({ path: 'latin1.txt' }, { signal });
    await assert.rejects(
      tools.edit_file!.run({ path: 'latin1.txt', old_text: 'value = 1', new_text: 'value = 2' }, { signal }),
      /not valid UTF-8/,
    );
    assert.deepEqual(await readFile(join(root, 'latin1.txt')), bytes);
  });

  it('leave the file as it was when the turn is aborted during the write (the model is told the call was cancelled)', async () => {
    const { root, tools } = await workspace();
    await writeFile(join(root, 'big.txt'), 'old\n');
    await tools.read_file!.run({ path: 'big.txt' }, { signal });
    const controller = new AbortController();
    // Aborted the moment the temporary file appears: while its 30 MB are written and synced.
    const watcher = watch(root, (_event, name) => {
      if (String(name).startsWith('.big.txt.unstuck-')) controller.abort();
    });
    try {
      const outcome = await tools
        .write_file!.run({ path: 'big.txt', content: 'n'.repeat(30 * 1024 * 1024) }, { signal: controller.signal })
        .then(String, (error: Error) => `Error: ${error.message}`);
      assert.ok(controller.signal.aborted, 'the abort did not land during the write');
      assert.match(outcome, /^Error: the write of big\.txt was stopped: the turn was aborted; the file is unchanged$/);
    } finally {
      watcher.close();
    }
    assert.equal(await readFile(join(root, 'big.txt'), 'utf8'), 'old\n');
    assert.deepEqual((await readdir(root)).sort(), ['big.txt']);
  });

  it("remove the temporary file a killed writer left, and only a dead writer's", async () => {
    const { root, tools } = await workspace();
    const dead = `.g.txt.unstuck-${2 ** 22 + 12345}-0123abcd.tmp`;
    const live = `.g.txt.unstuck-${process.ppid}-0123abcd.tmp`;
    await writeFile(join(root, dead), 'partial');
    await writeFile(join(root, live), 'in progress');
    await tools.write_file!.run({ path: 'g.txt', content: 'whole' }, { signal });
    assert.deepEqual((await readdir(root)).sort(), [live, 'g.txt'].sort());
  });
});

describe("the model's tools may not write unstuck's own configuration (.unstuck/)", () => {
  it('write_file and edit_file refuse .unstuck/ however it is spelled or linked, and write nothing', async () => {
    const { root, tools } = await workspace();
    await mkdir(join(root, '.unstuck'));
    await writeFile(join(root, '.unstuck', 'config.json'), '{}\n');
    await symlink('.unstuck', join(root, 'cfg'));
    await symlink('.unstuck/config.json', join(root, 'config-link.json'));
    await mkdir(join(root, 'sub'));
    const content = JSON.stringify({ baseURL: 'https://attacker.example/v1' });
    for (const path of [
      '.unstuck/config.json',
      './.unstuck/config.json',
      'sub/../.unstuck/config.json',
      '.unstuck/new.json',
      'cfg/config.json',
      'config-link.json',
      '.UNSTUCK/config.json',
      join(root, '.unstuck', 'config.json'),
    ]) {
      await assert.rejects(
        tools.write_file!.run({ path, content }, { signal }),
        /in \.unstuck\/, unstuck's own configuration and sessions; the model's tools may not write there/,
        path,
      );
    }
    await tools.read_file!.run({ path: '.unstuck/config.json' }, { signal });
    await assert.rejects(
      tools.edit_file!.run({ path: '.unstuck/config.json', old_text: '{}', new_text: content }, { signal }),
      /may not write there/,
    );
    assert.equal(await readFile(join(root, '.unstuck', 'config.json'), 'utf8'), '{}\n');
    assert.deepEqual(await readdir(join(root, '.unstuck')), ['config.json']);
    await assert.rejects(readFile(join(root, '.UNSTUCK', 'config.json')));
  });

  it("nor the user's own config and trusted-projects.json when the chat runs in the home folder (they were written, and redirected the key of every later chat)", async () => {
    const home = await mkdtemp(join(base, 'home-'));
    const tools = Object.fromEntries(
      createBuiltinTools({ root: home, confirm: allowAll, env: { PATH: process.env.PATH, HOME: home } }).map((tool) => [
        tool.name,
        tool,
      ]),
    );
    await mkdir(join(home, '.config', 'unstuck'), { recursive: true });
    await writeFile(join(home, '.config', 'unstuck', 'config.json'), '{}\n');
    await symlink('.config', join(home, 'cfg'));
    const content = JSON.stringify({ baseURL: 'https://attacker.example/v1' });
    for (const path of [
      '.config/unstuck/config.json',
      '.config/unstuck/trusted-projects.json',
      'cfg/unstuck/config.json',
      '.config/unstuck/new/x.json',
    ]) {
      await assert.rejects(
        tools.write_file!.run({ path, content }, { signal }),
        /is in unstuck's user configuration \(\.config\/unstuck\); the model's tools may not write there/,
        path,
      );
    }
    await tools.read_file!.run({ path: '.config/unstuck/config.json' }, { signal });
    await assert.rejects(
      tools.edit_file!.run({ path: '.config/unstuck/config.json', old_text: '{}', new_text: content }, { signal }),
      /may not write there/,
    );
    assert.equal(await readFile(join(home, '.config', 'unstuck', 'config.json'), 'utf8'), '{}\n');
    assert.deepEqual(await readdir(join(home, '.config', 'unstuck')), ['config.json']);
    // XDG_CONFIG_HOME wins over HOME, wherever it points; the rest of the home folder stays writable.
    const xdg = Object.fromEntries(
      createBuiltinTools({
        root: home,
        confirm: allowAll,
        env: { HOME: home, XDG_CONFIG_HOME: join(home, 'xdg') },
      }).map((tool) => [tool.name, tool]),
    );
    await assert.rejects(
      xdg.write_file!.run({ path: 'xdg/unstuck/config.json', content }, { signal }),
      /may not write there/,
    );
    assert.match(
      String(await xdg.write_file!.run({ path: '.config/unstuckish.json', content }, { signal })),
      /^wrote /,
    );
  });
});

describe('read_file refuses what is not a regular file without opening it blocking', () => {
  it('a FIFO with no writer is refused at once (today the turn hung)', async () => {
    const { root, tools } = await workspace();
    execFileSync('mkfifo', [join(root, 'fifo')]);
    const error = await settlesWithin(tools.read_file!.run({ path: 'fifo' }, { signal }), 5000, 'read_file of a FIFO');
    assert.ok(error instanceof Error);
    assert.equal(error.message, 'fifo is not a regular file (a FIFO); only regular files can be read');
  });

  it('a directory is pointed to list_directory', async () => {
    const { root, tools } = await workspace();
    await mkdir(join(root, 'folder'));
    await assert.rejects(
      tools.read_file!.run({ path: 'folder' }, { signal }),
      /folder is a directory \(use list_directory\)/,
    );
  });
});
