import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { after, test } from 'node:test';
import type { EmulatedRequest } from '../../src/emulator/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import { CLI_MAIN, useTemporaryDirectory } from './helpers.js';

/**
 * `unstuck proxy --token-file FILE` (or UNSTUCK_PROXY_TOKEN): only requests under /t/<token>/ are
 * served; any other gets one 403 in its wire's shape, with nothing of the request in it, and never
 * reaches the upstream. The token is never on a command line nor in a log line.
 */
const temporary = useTemporaryDirectory('unstuck-proxy-token-');
const seen: EmulatedRequest[] = [];
const emulator = createEmulator({ profile: 'openai', onRequest: (request) => seen.push(request) });
const upstream = await emulator.listen({ port: 0, host: '127.0.0.1' });
const children: ReturnType<typeof spawn>[] = [];
after(async () => {
  for (const child of children) child.kill('SIGKILL');
  await upstream.close();
});

async function startProxy(args: string[], env: Record<string, string> = {}) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CLI_MAIN, 'proxy', '--upstream', upstream.url, '--port', '0', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  );
  children.push(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  while (!stderr.includes('\n')) await new Promise((resolve) => setTimeout(resolve, 20));
  const listening = JSON.parse(stderr.split('\n')[0] ?? '') as { url: string; token?: string };
  return { listening, stderr: () => stderr, child };
}

const SECRET = 'the body says swordfish';
const chat = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: SECRET }] });
const post = (url: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-token-test-key' },
    body: chat,
  });

test('--token-file: a missing file is made (0600); without the token a 403 with nothing of the request, upstream never hit', async () => {
  const file = temporary.path('token');
  const proxy = await startProxy(['--token-file', file]);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const token = readFileSync(file, 'utf8').trim();
  assert.match(token, /^[\w-]{32}$/);
  assert.equal(proxy.listening.token, file, 'the listening line says where the token is, never the token');
  const before = seen.length;
  for (const path of ['/v1/chat/completions', `/t/${token.slice(0, -1)}A/v1/chat/completions`, '/healthz']) {
    const response =
      path === '/healthz' ? await fetch(`${proxy.listening.url}${path}`) : await post(`${proxy.listening.url}${path}`);
    assert.equal(response.status, 403, path);
    const text = await response.text();
    assert.equal(text.split('\n').length, 1, 'one line');
    assert.ok(!text.includes('swordfish') && !text.includes('sk-token'), `nothing of the request comes back: ${text}`);
    assert.match(text, /serves only the clients given its token/);
  }
  assert.equal(seen.length, before, 'nothing reached the upstream');
  const served = await post(`${proxy.listening.url}/t/${token}/v1/chat/completions`);
  assert.equal(served.status, 200);
  assert.equal(seen.length, before + 1);
  // Started again with the same file: the same token (the file is read, not replaced).
  proxy.child.kill('SIGTERM');
  const again = await startProxy(['--token-file', file]);
  assert.equal((await post(`${again.listening.url}/t/${token}/v1/chat/completions`)).status, 200);
  again.child.kill('SIGTERM');
  assert.ok(!proxy.stderr().includes(token) && !again.stderr().includes(token), 'the token is never logged');
});

test('UNSTUCK_PROXY_TOKEN: the same, from the environment', async () => {
  const token = 'env-token-0123456789abcdef';
  const proxy = await startProxy([], { UNSTUCK_PROXY_TOKEN: token });
  assert.equal(proxy.listening.token, 'env');
  assert.equal((await post(`${proxy.listening.url}/v1/chat/completions`)).status, 403);
  assert.equal((await post(`${proxy.listening.url}/t/${token}/v1/chat/completions`)).status, 200);
  proxy.child.kill('SIGTERM');
});

test('a token file others can read, a link, a bad token, or both sources: one line, exit 2, nothing served', () => {
  const shared = temporary.path('shared');
  writeFileSync(shared, 'abcdefghijklmnopqrstuvwxyz\n');
  chmodSync(shared, 0o644);
  const link = temporary.path('link');
  const target = temporary.path('target');
  writeFileSync(target, 'abcdefghijklmnopqrstuvwxyz\n', { mode: 0o600 });
  symlinkSync(target, link);
  const short = temporary.path('short');
  writeFileSync(short, 'abc\n', { mode: 0o600 });
  const cases: [string[], Record<string, string>, RegExp][] = [
    [['--token-file', shared], {}, /shared: the token file is readable by other users \(chmod 600 .*shared\)/],
    [['--token-file', link], {}, /link: the token file must be a regular file, not a link/],
    [['--token-file', short], {}, /short: the token must be 16 to 256 letters/],
    [['--token-file', target], { UNSTUCK_PROXY_TOKEN: 'x'.repeat(20) }, /give the token once/],
  ];
  for (const [args, env, expected] of cases) {
    const result = spawnSync(
      process.execPath,
      ['--import', 'tsx', CLI_MAIN, 'proxy', '--upstream', upstream.url, '--port', '0', ...args],
      { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 30_000 },
    );
    assert.equal(result.status, 2, result.stderr);
    assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr);
    assert.match(result.stderr, expected);
  }
});
