import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AGENT_NAMES } from '../../src/cli/agent-targets.js';
import type { EmulatedRequest } from '../../src/emulator/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import { CLI_MAIN, useTemporaryDirectory } from './helpers.js';

/**
 * Each agent target of `unstuck run`, with a fake agent that prints its own command line and what
 * it was given: the run's token is never on a child's command line (every local user reads it in
 * `ps`); Codex, which can be pointed only there, is admitted by process instead; OpenCode is
 * pointed by its inline config, over the user's own.
 */
const FAKE_AGENT = fileURLToPath(new URL('../fixtures/run/fake-agent.mjs', import.meta.url));
const temporary = useTemporaryDirectory('unstuck-run-targets-');
const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers) await close();
});

/** An executable agent: `sh` runs the fake agent as its child (no exec), so the agent is a process tree. */
function wrapper(name: string): string {
  const directory = temporary.path(`bin-${name}`);
  mkdirSync(directory, { recursive: true });
  const file = join(directory, name);
  writeFileSync(file, `#!/bin/sh\n'${process.execPath}' '${FAKE_AGENT}' "$@"\n`);
  chmodSync(file, 0o755);
  return file;
}

/** The process check needs Linux's /proc; elsewhere Codex's URL carries the token (docs/decisions/cli-run-agent.md). */
const BY_PROCESS = existsSync('/proc/net/tcp');
const VARIABLES = ['ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL', 'GOOGLE_GEMINI_BASE_URL', 'OPENCODE_CONFIG_CONTENT'];

function start(args: string[], env: Record<string, string> = {}) {
  const base = { ...process.env };
  for (const name of [...VARIABLES, 'NO_COLOR', 'OPENCODE_CONFIG', 'XDG_CONFIG_HOME']) delete base[name];
  const child = spawn(process.execPath, ['--import', 'tsx', CLI_MAIN, 'run', ...args], {
    env: { ...base, XDG_CONFIG_HOME: temporary.path('no-config'), ...env },
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
  const finished = once(child, 'exit').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  return { child, finished, stdout: () => stdout };
}

async function emulator() {
  const seen: EmulatedRequest[] = [];
  const instance = createEmulator({ profile: 'openai', onRequest: (request) => seen.push(request) });
  const listening = await instance.listen({ port: 0, host: '127.0.0.1' });
  closers.push(listening.close);
  return { url: listening.url, seen };
}

interface Printed {
  cmdline: string[];
  configs: Record<string, string>;
  env: Record<string, string | null>;
}

test('no agent target puts the run token on a command line', {
  skip: BY_PROCESS ? false : 'reads /proc/self/cmdline and needs the process check (Linux)',
}, async () => {
  for (const name of AGENT_NAMES) {
    const result = await start(['--agent', name, '--', wrapper(name), 'argv', ...VARIABLES]).finished;
    assert.equal(result.code, 0, `${name}: ${result.stderr}`);
    const printed = JSON.parse(result.stdout) as Printed;
    const given = JSON.stringify(printed.env);
    const tokens = [...given.matchAll(/\/t\/([\w-]{32})/g)].map((match) => match[1] as string);
    const commandLine = printed.cmdline.join(' ');
    for (const token of tokens) assert.ok(!commandLine.includes(token), `${name}: the token is on the command line`);
    assert.ok(!/\/t\/[\w-]{32}/.test(commandLine), `${name}: a token-shaped path on the command line: ${commandLine}`);
    if (name === 'codex') {
      // Pointed on its command line, without a token: `-c openai_base_url="http://127.0.0.1:PORT/v1"`.
      assert.match(printed.configs['openai_base_url'] ?? '', /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      assert.deepEqual(tokens, []);
    } else assert.ok(tokens.length > 0, `${name}: its base URLs carry the token`);
  }
});

test("Codex: its own processes are admitted (a poisoned Responses request goes through repaired); another process's connection is closed", {
  skip: BY_PROCESS ? false : 'needs /proc (Linux)',
}, async () => {
  const upstream = await emulator();
  // The upstream is where OPENAI_BASE_URL pointed, as for the real Codex in e2e/agents (codex.ts step 7).
  const env = { OPENAI_BASE_URL: `${upstream.url}/v1` };
  const sent = await start(['--agent', 'codex', '--', wrapper('codex'), 'codex-send'], env).finished;
  assert.equal(sent.code, 0, sent.stderr);
  assert.deepEqual(
    upstream.seen.map((request) => [request.path, request.status, request.violations.length]),
    [['/v1/responses', 200, 0]],
  );
  assert.match(
    sent.stderr,
    /^unstuck: repaired 1 of 1 request \(tool-result-orphan ×1\); to see what was changed, add --report FILE; the saved session: unstuck scan\n$/,
  );

  const before = upstream.seen.length;
  const running = start(['--agent', 'codex', '--', wrapper('codex'), 'hold'], env);
  while (!running.stdout().includes('\n')) await new Promise((resolve) => setTimeout(resolve, 20));
  const { url } = JSON.parse(running.stdout().split('\n')[0] ?? '') as { url: string };
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  await assert.rejects(
    fetch(`${url}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-stranger' },
      body: JSON.stringify({ model: 'gpt-5', input: [] }),
    }),
    (error: Error & { cause?: { code?: string } }) => {
      assert.match(String(error.cause?.code ?? error.cause), /ECONNRESET|UND_ERR_SOCKET|other side closed/);
      return true;
    },
  );
  assert.equal(upstream.seen.length, before, 'nothing reached the upstream');
  running.child.kill('SIGTERM');
  assert.equal((await running.finished).code, 143);
});

test("OpenCode: pointed by OPENCODE_CONFIG_CONTENT over the user's config, whose base URL stays the upstream", async () => {
  const upstream = await emulator();
  const configHome = temporary.path('xdg');
  mkdirSync(join(configHome, 'opencode'), { recursive: true });
  writeFileSync(
    join(configHome, 'opencode', 'opencode.jsonc'),
    `{
  // the user's gateway for Anthropic, and a key read from the environment
  "provider": {
    "anthropic": { "options": { "baseURL": "${upstream.url}/v1", "apiKey": "{env:MY_KEY}", }, },
    "local": { "npm": "@ai-sdk/openai-compatible", "options": { "baseURL": "http://127.0.0.1:9/v1" } },
  },
  /* a trailing comma, as OpenCode allows */
}
`,
  );
  const result = await start(['--agent', 'opencode', '--', wrapper('opencode'), 'opencode-send'], {
    XDG_CONFIG_HOME: configHome,
    OPENCODE_CONFIG_CONTENT: '{"agent":{"build":{"model":"anthropic/claude-sonnet-4-5"}}}',
  }).finished;
  assert.equal(result.code, 0, result.stderr);
  const { config } = JSON.parse(result.stdout) as { config: { agent: unknown; provider: Record<string, any> } };
  // The user's own inline config is kept; only each provider's baseURL is set (OpenCode merges the rest from its files).
  assert.deepEqual(config.agent, { build: { model: 'anthropic/claude-sonnet-4-5' } });
  assert.deepEqual(Object.keys(config.provider).sort(), ['anthropic', 'google', 'local', 'openai']);
  for (const [id, provider] of Object.entries(config.provider)) {
    assert.deepEqual(Object.keys(provider), ['options'], id);
    assert.deepEqual(Object.keys(provider.options), ['baseURL'], id);
  }
  assert.match(config.provider['anthropic'].options.baseURL, /^http:\/\/127\.0\.0\.1:\d+\/t\/[\w-]{32}\/v1$/);
  assert.match(config.provider['google'].options.baseURL, /^http:\/\/127\.0\.0\.1:\d+\/t\/[\w-]{32}\/v1beta$/);
  // The request went to the user's configured base URL (the emulator), repaired.
  assert.deepEqual(
    upstream.seen.map((request) => [request.path, request.status, request.violations.length]),
    [['/v1/messages', 200, 0]],
  );
  assert.match(result.stderr, /^unstuck: repaired 1 of 1 request/);
});

test('OpenCode: a config it cannot read is one line, the agent not started', async () => {
  const result = await start(['--agent', 'opencode', '--', wrapper('opencode'), 'exit', '0'], {
    OPENCODE_CONFIG_CONTENT: '{"provider": ',
  }).finished;
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /^unstuck run: OPENCODE_CONFIG_CONTENT: not OpenCode config JSON/);
  assert.equal(result.stderr.trimEnd().split('\n').length, 1);
});
