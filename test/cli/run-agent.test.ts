import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { run as runCli } from '../../src/cli/run.js';
import type { EmulatedRequest } from '../../src/emulator/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import { CLI_MAIN, useTemporaryDirectory } from './helpers.js';

/**
 * `unstuck run -- COMMAND`, run as a process the way a user runs it, with a fake agent
 * (test/fixtures/run/fake-agent.mjs) as COMMAND and the strict emulator on 127.0.0.1 as the
 * provider: the agent's poisoned requests reach the emulator repaired, the exit code is the
 * agent's, signals reach the agent.
 */

const FAKE_AGENT = fileURLToPath(new URL('../fixtures/run/fake-agent.mjs', import.meta.url));
const temporary = useTemporaryDirectory('unstuck-run-');
const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers) await close();
});

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function start(args: string[], env: Record<string, string | undefined> = {}) {
  const base = { ...process.env };
  for (const name of ['ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL', 'GOOGLE_GEMINI_BASE_URL', 'NO_COLOR']) delete base[name];
  const child = spawn(process.execPath, ['--import', 'tsx', CLI_MAIN, 'run', ...args], {
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const finished = once(child, 'exit').then(([code, signal]) => ({ code, signal, stdout, stderr }) as Run);
  return { child, finished, stdout: () => stdout };
}

const run = (args: string[], env?: Record<string, string | undefined>): Promise<Run> => start(args, env).finished;

async function emulator() {
  const seen: EmulatedRequest[] = [];
  const instance = createEmulator({ profile: 'openai', onRequest: (request) => seen.push(request) });
  const listening = await instance.listen({ port: 0, host: '127.0.0.1' });
  closers.push(listening.close);
  return { url: listening.url, seen };
}

test('a poisoned chat and Anthropic request from the agent reach the strict emulator repaired; one summary line after', async () => {
  const upstream = await emulator();
  const result = await run(['--upstream', upstream.url, '--', process.execPath, FAKE_AGENT, 'send']);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout), { chat: 200, anthropic: 200 });
  assert.deepEqual(
    upstream.seen.map((request) => [request.wire, request.status, request.violations.length]),
    [
      ['chat', 200, 0],
      ['anthropic', 200, 0],
    ],
  );
  const lines = result.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, result.stderr);
  assert.match(
    lines[0] ?? '',
    /^unstuck: repaired 2 of 2 requests \(.+ ×\d.*\); to see what was changed, add --report FILE$/,
  );
  assert.ok(!result.stderr.includes('sk-'), 'no key on stderr');
  assert.ok(!result.stderr.includes('\u001b['), 'no colour when stderr is not a terminal');
});

test('the same requests straight at the emulator fail: the fake agent is poisoned', async () => {
  const upstream = await emulator();
  const child = spawn(process.execPath, [FAKE_AGENT, 'send'], {
    env: { ...process.env, OPENAI_BASE_URL: upstream.url, ANTHROPIC_BASE_URL: upstream.url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  const [code] = await once(child, 'exit');
  assert.equal(code, 1);
  assert.deepEqual(JSON.parse(stdout), { chat: 400, anthropic: 400 });
});

test('--quiet says nothing; --log FILE gets one JSON line per request, without keys', async () => {
  const upstream = await emulator();
  const logPath = temporary.path('requests.jsonl');
  const quiet = await run(['--quiet', '--upstream', upstream.url, '--', process.execPath, FAKE_AGENT, 'send']);
  assert.equal(quiet.code, 0);
  assert.equal(quiet.stderr, '');
  const logged = await run(['--log', logPath, '--upstream', upstream.url, '--', process.execPath, FAKE_AGENT, 'send']);
  assert.equal(logged.code, 0);
  assert.match(logged.stderr, new RegExp(`; each request in ${logPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n$`));
  const text = readFileSync(logPath, 'utf8');
  const entries = text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { wire: string; rules: string[] });
  assert.deepEqual(
    entries.map((entry) => entry.wire),
    ['chat', 'anthropic'],
  );
  assert.ok(entries.every((entry) => entry.rules.length > 0));
  assert.ok(!text.includes('sk-'), 'no key in the log');
});

test('nothing repaired: nothing said', async () => {
  const result = await run(['--', process.execPath, FAKE_AGENT, 'exit', '0']);
  assert.equal(result.code, 0);
  assert.equal(result.stderr, '');
});

test("the agent's exit code is ours; a signal that ended it is 128+n", async () => {
  assert.equal((await run(['--', process.execPath, FAKE_AGENT, 'exit', '3'])).code, 3);
  assert.equal((await run(['--', process.execPath, FAKE_AGENT, 'kill-self', 'SIGTERM'])).code, 143);
  assert.equal((await run(['--', process.execPath, FAKE_AGENT, 'kill-self', 'SIGKILL'])).code, 137);
});

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  test(`${signal} sent to unstuck reaches the agent, which traps it and exits 0; so do we`, async () => {
    const running = start(['--', process.execPath, FAKE_AGENT, 'trap', signal]);
    while (!running.stdout().includes('ready')) await new Promise((resolve) => setTimeout(resolve, 20));
    running.child.kill(signal);
    const result = await running.finished;
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.signal, null);
    assert.match(result.stdout, new RegExp(`"got":"${signal}"`));
  });
}

test('a command that cannot be found: one line, exit 127; one that cannot be run: 126', async () => {
  const missing = await run(['--', 'unstuck-no-such-agent-x', '--resume', 'id']);
  assert.equal(missing.code, 127);
  assert.equal(missing.stderr, "unstuck run: cannot start 'unstuck-no-such-agent-x': command not found\n");
  const notExecutable = await run(['--', FAKE_AGENT]);
  assert.equal(notExecutable.code, 126);
  assert.equal(notExecutable.stderr.split('\n').length, 2);
  const none = await run([]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /^unstuck run: missing the command to run/);
});

test("the variable's previous value becomes the upstream; the agent keeps its path", async () => {
  const upstream = await emulator();
  const result = await run(['--agent', 'qwen', '--', process.execPath, FAKE_AGENT, 'env', 'OPENAI_BASE_URL'], {
    OPENAI_BASE_URL: `${upstream.url}/v1`,
  });
  const pointed = (JSON.parse(result.stdout) as { OPENAI_BASE_URL: string }).OPENAI_BASE_URL;
  assert.match(pointed, /^http:\/\/127\.0\.0\.1:\d+\/t\/[\w-]{32}\/v1$/);
  assert.notEqual(pointed, `${upstream.url}/v1`);
  // The fake agent sends to both variables: with ANTHROPIC_BASE_URL set as well, both go through.
  const sent = await run(['--', process.execPath, FAKE_AGENT, 'send'], {
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    ANTHROPIC_BASE_URL: upstream.url,
  });
  assert.equal(sent.code, 0, sent.stderr);
  assert.deepEqual(
    upstream.seen.map((request) => [request.path, request.status, request.violations.length]),
    [
      ['/v1/chat/completions', 200, 0],
      ['/v1/messages', 200, 0],
    ],
  );
});

test('the agent is told by the basename of the command, or by --agent', async () => {
  const result = await run(
    ['--agent', 'claude', '--', process.execPath, FAKE_AGENT, 'env', 'ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL'],
    {},
  );
  const seen = JSON.parse(result.stdout) as Record<string, string | null>;
  assert.match(seen['ANTHROPIC_BASE_URL'] ?? '', /^http:\/\/127\.0\.0\.1:\d+\/t\/[\w-]{32}$/);
  assert.equal(seen['OPENAI_BASE_URL'], null);
  const wrong = await run(['--agent', 'vim', '--', 'true']);
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /--agent must be one of claude, gemini, qwen, codex, opencode, generic, not 'vim'/);
});

test('Gemini and Responses requests are repaired too, the key header going through as it came', async () => {
  const seen: { url: string; key: string | undefined; body: string }[] = [];
  const server = createServer((incoming, outgoing) => {
    let body = '';
    incoming.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    incoming.on('end', () => {
      const key = incoming.headers['x-goog-api-key'] ?? incoming.headers.authorization;
      seen.push({ url: incoming.url ?? '', key: Array.isArray(key) ? key[0] : key, body });
      outgoing.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  const upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const result = await run(['--', process.execPath, FAKE_AGENT, 'send-other'], {
    GOOGLE_GEMINI_BASE_URL: upstream,
    OPENAI_BASE_URL: `${upstream}/v1`,
  });
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout), { gemini: 200, responses: 200 });
  assert.match(result.stderr, /^unstuck: repaired 2 of 2 requests \(.*tool-result-orphan ×1.*\)/);
  assert.ok(!result.stderr.includes('fake-gemini-key') && !result.stderr.includes('sk-fake-agent-key'));
  assert.deepEqual(
    seen.map((request) => [request.url, request.key]),
    [
      ['/v1beta/models/gemini-2.5-flash:generateContent', 'fake-gemini-key'],
      ['/v1/responses', 'Bearer sk-fake-agent-key'],
    ],
  );
  // The output whose call is gone went out as user text saying what it was, not as the orphan the API rejects.
  const input = (JSON.parse(seen[1]?.body ?? '') as { input: { type?: string; role?: string }[] }).input;
  assert.equal(input.length, 1);
  assert.notEqual(input[0]?.type, 'function_call_output');
  assert.equal(input[0]?.role, 'user');
});

test('the summary line is coloured on a terminal, and not with NO_COLOR', async () => {
  const upstream = await emulator();
  const inProcess = async (env: Record<string, string>) => {
    let stderr = '';
    const code = await runCli(['run', '--upstream', upstream.url, '--', process.execPath, FAKE_AGENT, 'send'], {
      stdout: { write: () => true },
      stderr: {
        write: (text: string) => {
          stderr += text;
          return true;
        },
        isTTY: true,
      },
      stdin: process.stdin,
      env: { ...process.env, FAKE_AGENT_SILENT: '1', ...env },
      cwd: process.cwd(),
    });
    return { code, stderr };
  };
  const coloured = await inProcess({ NO_COLOR: '' });
  assert.equal(coloured.code, 0, coloured.stderr);
  const ESC = '\u001b';
  assert.ok(coloured.stderr.startsWith(`${ESC}[33munstuck: repaired 2 of 2 requests `), coloured.stderr);
  assert.ok(coloured.stderr.endsWith(`${ESC}[39m\n`), coloured.stderr);
  const plain = await inProcess({ NO_COLOR: '1' });
  assert.equal(plain.code, 0, plain.stderr);
  assert.match(plain.stderr, /^unstuck: repaired 2 of 2 requests .*\n$/);
  assert.ok(!plain.stderr.includes(ESC), plain.stderr);
});

test('nothing listens after the run: the port the agent was given is closed', async () => {
  const result = await run(['--agent', 'claude', '--', process.execPath, FAKE_AGENT, 'env', 'ANTHROPIC_BASE_URL']);
  const url = (JSON.parse(result.stdout) as { ANTHROPIC_BASE_URL: string }).ANTHROPIC_BASE_URL;
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/t\/[\w-]{32}$/);
  await assert.rejects(fetch(`${url}/healthz`), (error: Error & { cause?: { code?: string } }) => {
    assert.equal(error.cause?.code, 'ECONNREFUSED');
    return true;
  });
});

test("without --, options are read only before the command: the rest is the agent's", async () => {
  const result = await run(['--agent', 'qwen', process.execPath, FAKE_AGENT, 'env', 'OPENAI_BASE_URL', '--quiet']);
  assert.equal(result.code, 0, result.stderr);
  const seen = JSON.parse(result.stdout) as Record<string, string | null>;
  assert.match(seen['OPENAI_BASE_URL'] ?? '', /^http:\/\/127\.0\.0\.1:\d+\/t\/[\w-]{32}\/v1$/);
  assert.equal(seen['--quiet'], null, 'the agent got --quiet as its own argument');
  assert.equal((await run(['--agent=claude', process.execPath, FAKE_AGENT, 'exit', '4'])).code, 4);
});

interface Held {
  url: string;
  pid: number;
  parent: number;
}

/** Starts `unstuck run` with the fake agent in hold mode; resolves when the agent has said where it points. */
async function hold(args: string[], env?: Record<string, string | undefined>) {
  const running = start([...args, '--agent', 'claude', '--', process.execPath, FAKE_AGENT, 'hold'], env);
  while (!running.stdout().includes('\n')) await new Promise((resolve) => setTimeout(resolve, 20));
  return { ...running, held: JSON.parse(running.stdout().split('\n')[0] ?? '') as Held };
}

const refused = (error: Error & { cause?: { code?: string } }): boolean => {
  assert.equal(error.cause?.code, 'ECONNREFUSED');
  return true;
};

test("a second process cannot use the run's proxy: without the run's token, a 403 in the wire's shape, upstream never hit", async () => {
  const upstream = await emulator();
  const logPath = temporary.path('refused.jsonl');
  const running = await hold(['--log', logPath, '--upstream', upstream.url]);
  const { url } = running.held;
  const token = /\/t\/([\w-]+)$/.exec(url)?.[1] ?? '';
  assert.equal(token.length, 32);
  const origin = new URL(url).origin;
  const body = JSON.stringify({
    model: 'claude-sonnet-4-5',
    max_tokens: 8,
    messages: [{ role: 'user', content: 'hi' }],
  });
  const headers = {
    'content-type': 'application/json',
    'x-api-key': 'sk-ant-stranger',
    'anthropic-version': '2023-06-01',
  };
  for (const path of ['/v1/messages', '/t/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/v1/messages', `/t/${token}x/v1/messages`]) {
    const response = await fetch(`${origin}${path}`, { method: 'POST', headers, body });
    assert.equal(response.status, 403, path);
    const answer = (await response.json()) as { type?: string; error?: { type?: string; message?: string } };
    assert.equal(answer.type, 'error', `Anthropic's error shape for ${path}`);
    assert.match(answer.error?.message ?? '', /serves only the clients given its token/);
  }
  // A path of no wire: OpenAI's error shape, as for any other local error of the proxy.
  const bare = await fetch(`${origin}/t/`, { method: 'POST', headers, body });
  assert.equal(bare.status, 403);
  assert.equal(((await bare.json()) as { error?: { code?: string } }).error?.code, 'forbidden');
  for (const path of ['/healthz', '/metrics', '/t/nope/healthz'])
    assert.equal((await fetch(`${origin}${path}`)).status, 403, path);
  assert.deepEqual(upstream.seen, [], 'nothing reached the upstream');
  // The URL the agent was given works (the token is what tells the agent from a stranger).
  assert.equal((await fetch(`${url}/healthz`)).status, 200);
  running.child.kill('SIGTERM');
  const result = await running.finished;
  assert.equal(result.code, 143);
  const log = readFileSync(logPath, 'utf8');
  assert.ok(!log.includes(token), 'the token is never logged');
  assert.ok(log.includes('/t/[redacted]/v1/messages'), log);
  assert.ok(!log.includes('sk-ant'), 'no key in the log');
});

test('the agent SIGKILLed: unstuck run exits 137 and nothing listens on its port', async () => {
  const running = await hold([]);
  process.kill(running.held.pid, 'SIGKILL');
  const result = await running.finished;
  assert.equal(result.code, 137);
  await assert.rejects(fetch(`${running.held.url}/healthz`), refused);
  await assert.rejects(fetch(`${new URL(running.held.url).origin}/healthz`), refused);
});

test("unstuck run SIGKILLed: the agent's next request fails cleanly, connection refused", async () => {
  const upstream = await emulator();
  const running = await hold(['--upstream', upstream.url]);
  assert.equal(running.held.parent, running.child.pid, 'the agent is our child, not a wrapper');
  running.child.kill('SIGKILL');
  const result = await running.finished;
  assert.equal(result.signal, 'SIGKILL');
  // The agent outlives us (its stdout is still the pipe): wait for the line it writes after its request.
  const deadline = Date.now() + 8000;
  while (!/"after"/.test(running.stdout()) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 25));
  const after = running.stdout().trimEnd().split('\n').at(-1) ?? '';
  assert.deepEqual(JSON.parse(after), { after: 'ECONNREFUSED' });
  assert.deepEqual(upstream.seen, [], 'the request went nowhere');
  await assert.rejects(fetch(`${running.held.url}/healthz`), refused);
});
