import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isPermanentConnectFailure, isTransient } from '../../src/agent/wire-error.js';
import { explainNetworkErrors } from '../../src/chat/explain-network-error.js';
import { check } from '../../src/core/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import { createTranscriptStore } from '../../src/session/index.js';
import { cleanEnv, NODE_ARGS, runChatBinary } from './harness/run-chat-binary.js';

let cwd: string;
before(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'unstuck-chat-interrupted-'));
});
after(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('an aborted stream keeps its partial answer', () => {
  it('Ctrl-C in the middle of an answer: the text shown is in the saved history, marked, and the history is valid', async () => {
    const dir = await mkdtemp(join(cwd, 'partial-'));
    const emulator = createEmulator({
      profile: 'deepseek',
      script: [
        {
          text: 'The first part of a long answer, and then much more that never arrives.',
          stream: { chunkSize: 6, delayMs: 150 },
        },
      ],
    });
    const server = await emulator.listen();
    try {
      const child = spawn(
        process.execPath,
        [...NODE_ARGS, 'chat', '--base-url', server.url, '--profile', 'deepseek', '-p', 'tell me'],
        { cwd: dir, env: cleanEnv({ OPENAI_API_KEY: 'sk-test' }), stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      await new Promise<void>((resolve) => {
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString('utf8');
          if (stdout.length >= 12) resolve();
        });
      });
      child.kill('SIGINT');
      assert.equal(await exited, 130);
      const sessions = (await readdir(join(dir, '.unstuck', 'sessions'))).filter((name) => name.endsWith('.md'));
      const stored = await createTranscriptStore(join(dir, '.unstuck', 'sessions', sessions[0]!)).load();
      assert.deepEqual(stored.problems, []);
      assert.deepEqual(
        stored.messages.map((message) => message.role),
        ['user', 'assistant'],
      );
      const content = String(stored.messages[1]?.content);
      assert.ok(content.startsWith('The first pa'), content);
      assert.ok(content.endsWith('\n\n[interrupted by the user]'), content);
      assert.ok(!content.includes('never arrives'));
      assert.deepEqual(check(stored.messages, { profile: 'deepseek', model: 'deepseek-chat' }), []);
    } finally {
      await server.close();
    }
  });
});

describe('a connection that cannot work is not retried', () => {
  it('--base-url http://127.0.0.1:1/v1 (a port fetch refuses) fails at once with one line', async () => {
    const started = Date.now();
    const result = await runChatBinary(['chat', '--base-url', 'http://127.0.0.1:1/v1', '-p', 'hi'], {
      cwd,
      env: cleanEnv({ OPENAI_API_KEY: 'sk-test' }),
    });
    assert.equal(result.code, 1);
    assert.equal(result.stderr, 'unstuck chat: network failure: cannot reach http://127.0.0.1:1 (bad port)\n');
    assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
  });

  it('sorts failures: bad port, invalid URL, unknown host and port 0 are permanent; a refusal or reset elsewhere is transient', async () => {
    const failing =
      (cause: Error & { code?: string }): typeof fetch =>
      async () => {
        throw new TypeError('fetch failed', { cause });
      };
    const withCode = (message: string, code: string): Error & { code: string } =>
      Object.assign(new Error(message), { code });
    const cases: [string, Error, boolean][] = [
      ['http://127.0.0.1:1/v1', new Error('bad port'), true],
      ['http://no-such-host.invalid/v1', withCode('getaddrinfo ENOTFOUND no-such-host.invalid', 'ENOTFOUND'), true],
      ['http://127.0.0.1:0/v1', withCode('connect ECONNREFUSED 127.0.0.1', 'ECONNREFUSED'), true],
      ['http://127.0.0.1:8080/v1', withCode('connect ECONNREFUSED 127.0.0.1:8080', 'ECONNREFUSED'), false],
      ['http://api.example/v1', withCode('getaddrinfo EAI_AGAIN api.example', 'EAI_AGAIN'), false],
      ['http://api.example/v1', withCode('socket hang up', 'ECONNRESET'), false],
    ];
    for (const [url, cause, permanent] of cases) {
      assert.equal(
        isPermanentConnectFailure(new TypeError('fetch failed', { cause }), url),
        permanent,
        `${url} ${cause.message}`,
      );
      // The same through the chat's explaining fetch, which drops the cause but keeps the verdict.
      const explained = await explainNetworkErrors(failing(cause))(url).catch((error: unknown) => error);
      assert.equal(isPermanentConnectFailure(explained, url), permanent, `explained ${url} ${cause.message}`);
      assert.equal(
        isTransient(permanent ? { kind: 'network', detail: '', permanent: true } : { kind: 'network', detail: '' }),
        !permanent,
      );
    }
    assert.equal(
      isPermanentConnectFailure(
        new TypeError('Failed to parse URL', { cause: withCode('Invalid URL', 'ERR_INVALID_URL') }),
        'http://[::1/v1',
      ),
      true,
    );
  });
});
