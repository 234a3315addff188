import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, lstat, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { run } from '../../src/cli/run.js';
import { check, type Message } from '../../src/index.js';
import { formatTranscript, parseTranscript } from '../../src/session/index.js';
import { captureIo } from '../support/capture-io.js';
import { CLI_MAIN, unansweredCall, useTemporaryDirectory } from './helpers.js';

const broken = unansweredCall;
const MAIN = CLI_MAIN;
const { path } = useTemporaryDirectory('unstuck-fix-write-');

/** `unstuck ARGS` as its own process (what a user runs), with its exit code and output. */
function unstuck(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

describe('fix --write: the backup, the mode, and concurrent runs', () => {
  test('an existing FILE.bak symlink is replaced, never written through: its target keeps its content', async () => {
    const victim = path('victim.txt');
    await writeFile(victim, 'do not overwrite me\n');
    const original = JSON.stringify(broken);
    await writeFile(path('linked.json'), original);
    await symlink(victim, path('linked.json.bak'));
    assert.equal(await run(['fix', '--write', path('linked.json')], captureIo()), 0);
    assert.equal(await readFile(victim, 'utf8'), 'do not overwrite me\n');
    assert.equal((await lstat(path('linked.json.bak'))).isSymbolicLink(), false);
    assert.equal(await readFile(path('linked.json.bak'), 'utf8'), original);
    assert.deepEqual(check(JSON.parse(await readFile(path('linked.json'), 'utf8')) as Message[]), []);
  });

  test('a Markdown session: the FILE.bak link is replaced too', async () => {
    const victim = path('victim-md.txt');
    await writeFile(victim, 'keep\n');
    await writeFile(path('linked.md'), formatTranscript(broken));
    await symlink(victim, path('linked.md.bak'));
    assert.equal(await run(['fix', '--write', path('linked.md')], captureIo()), 0);
    assert.equal(await readFile(victim, 'utf8'), 'keep\n');
    assert.equal(await readlink(path('linked.md.bak')).catch(() => 'not a link'), 'not a link');
    assert.equal(await readFile(path('linked.md.bak'), 'utf8'), formatTranscript(broken));
  });

  test('a private (0600) file stays private, and so does its backup; JSON and Markdown', async () => {
    for (const [name, text] of [
      ['private.json', JSON.stringify(broken)],
      ['private.md', formatTranscript(broken)],
    ] as const) {
      await writeFile(path(name), text);
      await chmod(path(name), 0o600);
      assert.equal(await run(['fix', '--write', path(name)], captureIo()), 0, name);
      assert.equal((await stat(path(name))).mode & 0o777, 0o600, name);
      assert.equal((await stat(path(`${name}.bak`))).mode & 0o777, 0o600, `${name}.bak`);
    }
  });

  test('a read-only (0444) file is refused in one line, exit 2, nothing written', async () => {
    const original = JSON.stringify(broken);
    await writeFile(path('readonly.json'), original);
    await chmod(path('readonly.json'), 0o444);
    const io = captureIo();
    assert.equal(await run(['fix', '--write', path('readonly.json')], io), 2);
    assert.match(io.err(), /readonly\.json: read-only \(mode 0444\): not replaced, nothing written/);
    assert.equal(io.err().trim().split('\n').length, 1);
    assert.equal(await readFile(path('readonly.json'), 'utf8'), original);
    assert.equal((await stat(path('readonly.json'))).mode & 0o777, 0o444);
    await assert.rejects(stat(path('readonly.json.bak')), /ENOENT/);
  });

  test('a FILE that is a symbolic link is refused: neither the link nor its target is written', async () => {
    const original = JSON.stringify(broken);
    await writeFile(path('target.json'), original);
    await symlink(path('target.json'), path('link.json'));
    const io = captureIo();
    assert.equal(await run(['fix', '--write', path('link.json')], io), 2);
    assert.match(io.err(), /link\.json: is a symbolic link \(to .*target\.json\): not replaced, nothing written/);
    assert.equal((await lstat(path('link.json'))).isSymbolicLink(), true);
    assert.equal(await readFile(path('target.json'), 'utf8'), original);
    await assert.rejects(stat(path('link.json.bak')), /ENOENT/);
  });

  test('many concurrent fix --write in one process: FILE.bak always holds the true original, one run writes', async () => {
    for (const [name, text] of [
      ['racing.json', JSON.stringify(broken, null, 2)],
      ['racing.md', formatTranscript(broken)],
    ] as const) {
      for (let round = 0; round < 5; round += 1) {
        await rm(path(`${name}.bak`), { force: true });
        await writeFile(path(name), text);
        const ios = Array.from({ length: 12 }, () => captureIo());
        // Started a millisecond apart, so some read while another is between its backup and its
        // write (before the lock covered the read, 13-17 rounds in 20 ended with a repaired FILE.bak).
        const codes = await Promise.all(
          ios.map(async (io, index) => {
            await sleep(index);
            return run(['fix', '--write', path(name)], io);
          }),
        );
        assert.deepEqual(
          codes,
          ios.map(() => 0),
          ios.map((io) => io.err()).join(''),
        );
        assert.equal(await readFile(path(`${name}.bak`), 'utf8'), text, `${name} round ${round}`);
        assert.equal(ios.filter((io) => /written \(original kept/.test(io.err())).length, 1, name);
        assert.equal(ios.filter((io) => /valid, nothing to repair/.test(io.err())).length, 11, name);
      }
    }
  });

  test('concurrent fix --write processes: FILE.bak always holds the true original (JSON and Markdown)', async () => {
    for (const [name, text] of [
      ['processes.json', JSON.stringify(broken, null, 2)],
      ['processes.md', formatTranscript(broken)],
    ] as const) {
      await writeFile(path(name), text);
      const results = await Promise.all(Array.from({ length: 6 }, () => unstuck(['fix', '--write', path(name)])));
      assert.deepEqual(
        results.map((result) => result.code),
        results.map(() => 0),
        results.map((result) => result.err).join(''),
      );
      assert.equal(await readFile(path(`${name}.bak`), 'utf8'), text, name);
      assert.equal(results.filter((result) => /written \(original kept/.test(result.err)).length, 1, name);
      const repaired = await readFile(path(name), 'utf8');
      assert.deepEqual(
        check(name.endsWith('.md') ? parseTranscript(repaired).messages : (JSON.parse(repaired) as Message[])),
        [],
      );
    }
  });
});

describe('fix on JSONL: a line that cannot be read is never dropped silently', () => {
  const good = broken.map((message) => JSON.stringify(message));
  const badEscape = '{"role":"user","content":"bad \\q escape"}';

  test('--write refuses in one line naming the line, exit 2, and writes nothing', async () => {
    const text = `${good[0]}\n${badEscape}\n${good[1]}\n${good[2]}\n`;
    await writeFile(path('bad-line.jsonl'), text);
    const io = captureIo();
    assert.equal(await run(['fix', '--write', path('bad-line.jsonl')], io), 2);
    assert.match(io.err(), /bad-line\.jsonl:2: 1 line\(s\) cannot be read \(corrupt line, not JSON/);
    assert.match(io.err(), /nothing written/);
    assert.equal(io.err().trim().split('\n').length, 1);
    assert.equal(await readFile(path('bad-line.jsonl'), 'utf8'), text);
    await assert.rejects(stat(path('bad-line.jsonl.bak')), /ENOENT/);
  });

  test('without --write the output says the line is left out, and the exit code is 1', async () => {
    await writeFile(path('bad-line2.jsonl'), `${badEscape}\n${good.join('\n')}\n`);
    const io = captureIo();
    assert.equal(await run(['fix', path('bad-line2.jsonl')], io), 1);
    assert.match(io.err(), /1 line\(s\) that cannot be read are left out of the output/);
    assert.match(io.err(), /damaged .*bad-line2\.jsonl:1: corrupt line/);
  });

  test('a UTF-8 byte order mark on line 1 is read, and kept on write', async () => {
    const text = `\uFEFF${good.join('\n')}\n`;
    await writeFile(path('bom.jsonl'), text);
    const checked = captureIo();
    assert.equal(await run(['check', path('bom.jsonl')], checked), 1);
    assert.match(checked.out(), /1 problem for openai \(3 messages\)/);
    assert.equal(await run(['fix', '--write', path('bom.jsonl')], captureIo()), 0);
    const written = await readFile(path('bom.jsonl'));
    assert.deepEqual([...written.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    assert.equal(await readFile(path('bom.jsonl.bak'), 'utf8'), text);
    const lines = written
      .toString('utf8')
      .slice(1)
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Message);
    assert.equal(lines.length, 4);
    assert.deepEqual(check(lines), []);
  });

  test('a UTF-8 byte order mark in a .json file is accepted, and kept on write', async () => {
    await writeFile(path('bom.json'), `\uFEFF${JSON.stringify(broken)}`);
    const io = captureIo();
    assert.equal(await run(['check', path('bom.json')], io), 1);
    assert.match(io.out(), /1 problem for openai \(3 messages\)/);
    assert.equal(await run(['fix', '--write', path('bom.json')], captureIo()), 0);
    const written = await readFile(path('bom.json'), 'utf8');
    assert.equal(written.charCodeAt(0), 0xfeff);
    assert.deepEqual(check(JSON.parse(written.slice(1)) as Message[]), []);
  });
});
