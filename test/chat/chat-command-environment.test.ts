import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { commandEnvironment, isSecretName } from '../../src/chat/tools/command-environment.js';
import { createEmulator } from '../../src/emulator/index.js';
import { cleanEnv, runChatBinary, TSX } from './harness/run-chat-binary.js';

let cwd: string;
before(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'unstuck-chat-command-env-'));
});
after(async () => {
  await rm(cwd, { recursive: true, force: true });
});

const SECRETS = {
  DEEPSEEK_API_KEY: 'sk-deepseek-secret-1',
  OPENAI_API_KEY: 'sk-openai-secret-2',
  GITHUB_TOKEN: 'ghp_secret3',
  AWS_SECRET_ACCESS_KEY: 'aws-secret-4',
  AWS_ACCESS_KEY_ID: 'AKIA-secret-5',
  DB_PASSWORD: 'db-secret-6',
  NPM_CONFIG__AUTH: 'npm-secret-7',
};

describe('run_command gets a scrubbed environment', () => {
  it("passes PATH, HOME and the locale, never a token or key, and the chat's own /proc/PID/environ no longer shows them", {
    skip: process.platform !== 'linux' ? 'reads /proc' : false,
  }, async () => {
    const dir = join(cwd, 'scrubbed');
    await mkdir(dir);
    const command = 'echo "path=$PATH"; env; echo ---parent---; tr "\\000" "\\n" < /proc/$PPID/environ';
    const emulator = createEmulator({
      profile: 'deepseek',
      script: [{ toolCalls: [{ name: 'run_command', arguments: JSON.stringify({ command }) }] }, { text: 'looked' }],
    });
    const server = await emulator.listen();
    try {
      const env = cleanEnv({ ...SECRETS, SOME_SETTING: 'plain', LC_ALL: 'C.UTF-8' });
      const result = await runChatBinary(
        ['chat', '--base-url', server.url, '--profile', 'deepseek', '--yes', '--json', '-p', 'look around'],
        { cwd: dir, env },
      );
      assert.equal(result.code, 0, result.stderr);
      const report = JSON.parse(result.stdout) as { toolCalls: { result: string }[]; session: string };
      const output = report.toolCalls[0]?.result ?? '';
      assert.match(output, /^exit code 0\n/);
      assert.match(output, new RegExp(`path=${process.env.PATH?.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') ?? ''}`));
      assert.match(output, /^LC_ALL=C\.UTF-8$/m);
      // Not on the allow-list: not in the command's own environment (the parent's block still has it).
      assert.doesNotMatch(output.split('---parent---')[0] ?? '', /SOME_SETTING/);
      // The parent's initial environment block is readable, and the secrets are gone from it.
      assert.match(output, /---parent---\n(.|\n)*PATH=/);
      const sent = JSON.stringify(emulator.requests.map((request) => request.body));
      const saved = await readFile(join(dir, '.unstuck', 'sessions', `${report.session}.md`), 'utf8');
      for (const [name, value] of Object.entries(SECRETS)) {
        assert.ok(!output.includes(value), `${name} reached the command`);
        assert.ok(!sent.includes(value), `${name} was sent to the provider`);
        assert.ok(!saved.includes(value), `${name} was saved in the transcript`);
      }

      // .unstuck/ is private and ignored by git.
      assert.equal((await stat(join(dir, '.unstuck'))).mode & 0o777, 0o700);
      assert.equal((await stat(join(dir, '.unstuck', 'sessions'))).mode & 0o777, 0o700);
      assert.equal(await readFile(join(dir, '.unstuck', '.gitignore'), 'utf8'), '*\n');
      for (const name of await readdir(join(dir, '.unstuck', 'sessions'))) {
        if (name.endsWith('.md'))
          assert.equal((await stat(join(dir, '.unstuck', 'sessions', name))).mode & 0o777, 0o600, name);
      }
    } finally {
      await server.close();
    }
  });

  it('a variable off the allow-list is not readable through /proc/$PPID/environ either, yet the chat keeps it (a listed one still reaches the command)', {
    skip: process.platform !== 'linux' ? 'reads /proc' : false,
  }, async () => {
    const dir = join(cwd, 'hidden');
    await mkdir(dir);
    const command = 'env; echo ---parent---; tr "\\000" "\\n" < /proc/$PPID/environ';
    const emulator = createEmulator({
      profile: 'deepseek',
      script: [{ toolCalls: [{ name: 'run_command', arguments: JSON.stringify({ command }) }] }, { text: 'looked' }],
    });
    const server = await emulator.listen();
    try {
      // Names that do not look like secrets, holding one all the same.
      const env = cleanEnv({
        OPENAI_API_KEY: 'sk-x',
        REDIS_URL: 'redis://:redis-pw-8@cache',
        DATABASE_URL: 'postgres://u:db-pw-9@db',
        UNSTUCK_COMMAND_ENV: 'DATABASE_URL',
      });
      const result = await runChatBinary(
        ['chat', '--base-url', server.url, '--profile', 'deepseek', '--yes', '--json', '-p', 'look around'],
        { cwd: dir, env },
      );
      assert.equal(result.code, 0, result.stderr);
      const output = (JSON.parse(result.stdout) as { toolCalls: { result: string }[] }).toolCalls[0]?.result ?? '';
      const [own = '', parent = ''] = output.split('---parent---');
      assert.match(parent, /PATH=/);
      assert.ok(!output.includes('redis-pw-8'), 'REDIS_URL, off the allow-list, was read from the parent');
      // Listed by the user: the command gets it, as before.
      assert.match(own, /^DATABASE_URL=postgres:\/\/u:db-pw-9@db$/m);
    } finally {
      await server.close();
    }
  });

  it('a hidden variable leaves the initial block but keeps its value in the process', {
    skip: process.platform !== 'linux' ? 'reads /proc' : false,
  }, async () => {
    const module = new URL('../../src/cli/erase-initial-environment.ts', import.meta.url).href;
    const program = `import { eraseInitialEnvironment } from ${JSON.stringify(module)};
      import { readFileSync } from 'node:fs';
      const erased = eraseInitialEnvironment(['GONE_TOKEN'], process.env, ['REDIS_URL']);
      const block = readFileSync('/proc/self/environ', 'latin1');
      console.log(JSON.stringify({ erased, redis: process.env.REDIS_URL ?? null, gone: process.env.GONE_TOKEN ?? null, blockHasRedis: block.includes('redis-pw'), blockHasGone: block.includes('gone-secret') }));`;
    const output = execFileSync(process.execPath, ['--import', TSX, '--input-type=module', '-e', program], {
      env: { PATH: process.env.PATH ?? '', REDIS_URL: 'redis://:redis-pw@cache', GONE_TOKEN: 'gone-secret' },
      encoding: 'utf8',
    });
    const seen = JSON.parse(output) as { erased: string[] };
    seen.erased.sort();
    assert.deepEqual(seen, {
      erased: ['GONE_TOKEN', 'REDIS_URL'],
      redis: 'redis://:redis-pw@cache',
      gone: null,
      blockHasRedis: false,
      blockHasGone: false,
    });
  });

  it('refuses a .unstuck that is a symbolic link (a repository could point it anywhere), in one line', async () => {
    const dir = join(cwd, 'linked');
    const elsewhere = join(cwd, 'elsewhere');
    await mkdir(dir);
    await mkdir(elsewhere);
    await symlink(elsewhere, join(dir, '.unstuck'));
    const result = await runChatBinary(['chat', '--base-url', 'http://127.0.0.1:9/v1', '-p', 'hi'], {
      cwd: dir,
      env: cleanEnv({ OPENAI_API_KEY: 'sk-test' }),
    });
    assert.equal(result.code, 2);
    assert.equal(
      result.stderr,
      `unstuck chat: ${join(dir, '.unstuck')}: is a symbolic link; refusing to keep sessions through it (remove it or make it a folder)\n`,
    );
    assert.deepEqual(await readdir(elsewhere), []);
  });

  it('knows secrets by name, and keeps them out even when listed in UNSTUCK_COMMAND_ENV', () => {
    for (const name of Object.keys(SECRETS)) assert.ok(isSecretName(name), name);
    for (const name of ['PATH', 'HOME', 'PWD', 'KEYBOARD_LAYOUT', 'LANG']) assert.ok(!isSecretName(name), name);
    const env = commandEnvironment({
      PATH: '/bin',
      HOME: '/h',
      GOPATH: '/go',
      MY_TOKEN: 't',
      EXTRA: 'x',
      UNSTUCK_COMMAND_ENV: 'GOPATH, MY_TOKEN',
    });
    assert.deepEqual(env, { PATH: '/bin', HOME: '/h', GOPATH: '/go', UNSTUCK_CHAT_COMMAND: '1' });
  });
});
