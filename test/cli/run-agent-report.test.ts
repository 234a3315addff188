import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { after, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { createRunRepairReport, MAX_REPORTED_REQUESTS } from '../../src/cli/report/run-repair-report.js';
import { createEmulator } from '../../src/emulator/index.js';
import type { ProxyRepairEvent } from '../../src/http/index.js';
import { createProxyHandler } from '../../src/http/index.js';
import { CLI_MAIN, useTemporaryDirectory } from './helpers.js';

/**
 * `unstuck run --report FILE`: the page of what the proxy repaired during the run, written after
 * the agent exits (and before it starts, so a path that cannot be written is said at once).
 */
const CHROMIUM = '/usr/bin/chromium';
const HOSTILE = `<script>document.title='pwned'</script></style><h1 id="injected">injected</h1>`;
const FAKE_AGENT = fileURLToPath(new URL('../fixtures/run/fake-agent.mjs', import.meta.url));
const temporary = useTemporaryDirectory('unstuck-run-report-');
const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers) await close();
});

function startCli(args: string[], env: Record<string, string> = {}) {
  const base = { ...process.env };
  for (const name of ['ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL', 'GOOGLE_GEMINI_BASE_URL', 'NO_COLOR']) delete base[name];
  const child = spawn(process.execPath, ['--import', 'tsx', CLI_MAIN, 'run', ...args], {
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  const finished = once(child, 'exit').then(([code]) => ({ code: code as number | null, stderr }));
  return { child, finished, stdout: () => stdout };
}

const runCli = (args: string[], env: Record<string, string> = {}) => startCli(args, env).finished;

test('--report FILE: each repaired request before and after, its changes; self-contained, private, no key', async () => {
  const instance = createEmulator({ profile: 'openai' });
  const listening = await instance.listen({ port: 0, host: '127.0.0.1' });
  closers.push(listening.close);
  const file = temporary.path('run.html');
  const result = await runCli(
    ['--report', file, '--upstream', listening.url, '--', process.execPath, FAKE_AGENT, 'send'],
    { FAKE_AGENT_TEXT: HOSTILE },
  );
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, new RegExp(`; what was changed: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n$`));
  assert.ok(existsSync(file));
  assert.equal(statSync(file).mode & 0o777, 0o600, 'the page holds the conversation: the user alone reads it');
  const html = readFileSync(file, 'utf8');
  // Self-contained: no script, nothing fetched, a CSP that forbids both.
  assert.ok(!/<script/i.test(html));
  assert.ok(!/\b(?:src|href)="(?!#)/i.test(html), 'no resource outside the page');
  assert.match(html, /Content-Security-Policy" content="default-src 'none'/);
  // The two requests the fake agent sends, each with its path, the change and the history before and after.
  assert.match(html, /#1 \/chat\/completions \(repaired before sending\)/);
  assert.match(html, /#2 \/v1\/messages\?beta=true \(repaired before sending\)/);
  const kinds = [...html.matchAll(/<tr class="change" data-kind="([^"]+)"/g)].map((match) => match[1]);
  assert.deepEqual(kinds, ['result-synthesized', 'result-synthesized', 'messages-merged']);
  assert.match(html, /<strong data-count="changes">3<\/strong>/);
  assert.match(html, /<h3>Before and after<\/h3>/);
  assert.match(html, /call_1/);
  assert.match(html, /toolu_01A/);
  // What the provider says of the history as it came (the emulator's wording is the provider's).
  assert.match(html, /<tr class="problem">/);
  assert.ok(!html.includes('sk-fake-agent-key') && !html.includes('sk-ant-fake-agent-key'), 'no key in the page');
  // The conversation's markup is text on the page, in headless Chromium too (no script ran, nothing was injected).
  assert.ok(!html.includes(HOSTILE) && html.includes('&#60;script&#62;document.title'));
  if (existsSync(CHROMIUM)) {
    const { stdout, stderr } = await promisify(execFile)(
      CHROMIUM,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--enable-logging=stderr',
        '--v=0',
        `--user-data-dir=${temporary.path('chromium-profile')}`,
        '--dump-dom',
        pathToFileURL(file).href,
      ],
      { maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
    );
    assert.deepEqual(
      stderr.split('\n').filter((line) => /CONSOLE|Content Security Policy/.test(line)),
      [],
    );
    assert.match(stdout, /<title>unstuck run: repaired requests<\/title>/);
    assert.ok(
      !stdout.includes('<h1 id="injected">') && stdout.includes('&lt;h1 id="injected"&gt;'),
      'the hostile heading stayed text',
    );
    assert.equal([...stdout.matchAll(/<tr class="change"/g)].length, 3);
  }
});

test('--report with nothing repaired: the page says so; a path that cannot be written: one line, the agent never starts', async () => {
  const file = temporary.path('nothing.html');
  const result = await runCli(['--report', file, '--', process.execPath, FAKE_AGENT, 'exit', '0']);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, '');
  assert.match(readFileSync(file, 'utf8'), /0 repairs of requests during this run/);
  const marker = temporary.path('started');
  const bad = await runCli(['--report', temporary.path('no/such/dir/r.html'), '--', 'touch', marker]);
  assert.equal(bad.code, 2, bad.stderr);
  assert.equal(bad.stderr.trimEnd().split('\n').length, 1, bad.stderr);
  assert.match(bad.stderr, /no\/such\/dir\/r\.html/);
  assert.ok(!existsSync(marker), 'the agent was not started');
});

test('a signal to unstuck run writes the report at once, before the agent has exited', async () => {
  const instance = createEmulator({ profile: 'openai' });
  const listening = await instance.listen({ port: 0, host: '127.0.0.1' });
  closers.push(listening.close);
  const file = temporary.path('signalled.html');
  const running = startCli([
    '--report',
    file,
    '--upstream',
    listening.url,
    '--',
    process.execPath,
    FAKE_AGENT,
    'send-then-linger',
  ]);
  const started = Date.now() + 20_000;
  while (!running.stdout().includes('\n') && Date.now() < started)
    await new Promise((resolve) => setTimeout(resolve, 20));
  assert.match(readFileSync(file, 'utf8'), /0 repairs of requests/, 'the page as written before the agent started');
  let exited = false;
  void running.finished.then(() => {
    exited = true;
  });
  running.child.kill('SIGTERM');
  const deadline = Date.now() + 1500;
  while (!/1 repair of requests/.test(readFileSync(file, 'utf8')) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 25));
  assert.match(readFileSync(file, 'utf8'), /1 repair of requests during this run/);
  assert.equal(exited, false, 'written while the agent was still running');
  assert.equal((await running.finished).code, 0);
});

test('the report keeps a bounded number of requests and says how many more there were', async () => {
  const report = createRunRepairReport();
  const before = {
    model: 'gpt-4o',
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'tool', tool_call_id: 'call_x', content: 'orphan' },
    ],
  };
  const event: ProxyRepairEvent = {
    id: 'r',
    path: '/v1/chat/completions',
    wire: 'chat',
    attempt: 'heal',
    before,
    after: { model: 'gpt-4o', messages: [before.messages[0], { role: 'user', content: 'orphan' }] },
    changes: [{ kind: 'orphan-to-user', index: 1, toolCallId: 'call_x', detail: 'a result without its call' }],
    rules: ['tool-result-orphan'],
    remaining: [],
    providerError: '{"error":{"message":"Invalid parameter: messages with role \'tool\' must be a response"}}',
  };
  for (let index = 0; index < MAX_REPORTED_REQUESTS + 7; index += 1) report.add(event);
  assert.equal(report.seen, MAX_REPORTED_REQUESTS + 7);
  const file = temporary.path('bounded.html');
  await report.write(file);
  const html = readFileSync(file, 'utf8');
  assert.equal([...html.matchAll(/<section class="session"/g)].length, MAX_REPORTED_REQUESTS);
  assert.match(html, new RegExp(`Only the first ${MAX_REPORTED_REQUESTS} are shown .*; 7 more are not\\.`));
  assert.match(html, /retried after the provider&#39;s 400/);
  assert.match(html, /<pre class="provider-error">.*must be a response/);
});

test("the proxy core tells the report each repair: the retry after a provider's 400 carries the 400 and the bodies before and after", async () => {
  // The moonshot emulator rejects an id used twice, which the openai profile lets through (as test/http's heal test).
  const emulator = createEmulator({ profile: 'moonshot' });
  const events: ProxyRepairEvent[] = [];
  const handler = createProxyHandler({
    upstream: 'http://upstream.test',
    profile: 'openai',
    fetch: emulator.fetch,
    onRepair: (event) => events.push(event),
  });
  const call = { id: 'read:0', type: 'function', function: { name: 'read', arguments: '{}' } };
  const messages = [
    { role: 'user', content: 'read' },
    { role: 'assistant', content: '', tool_calls: [call] },
    { role: 'tool', tool_call_id: 'read:0', content: 'one' },
    { role: 'user', content: 'again' },
    { role: 'assistant', content: '', tool_calls: [call] },
    { role: 'tool', tool_call_id: 'read:0', content: 'two' },
  ];
  const response = await handler(
    new Request('http://127.0.0.1/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-heal-key' },
      body: JSON.stringify({ model: 'kimi-k2', messages }),
    }),
  );
  assert.equal(response.status, 200);
  await response.text();
  assert.equal(events.length, 1);
  const [event] = events as [ProxyRepairEvent];
  assert.equal(event.attempt, 'heal');
  assert.equal(event.wire, 'chat');
  assert.equal(event.path, '/v1/chat/completions');
  assert.ok(event.changes.length > 0);
  assert.deepEqual((event.before['messages'] as unknown[]).length, messages.length);
  assert.notDeepEqual(event.after['messages'], event.before['messages']);
  assert.match(event.providerError ?? '', /"error"/);
  assert.ok(event.rejectedFor !== undefined);
  assert.ok(!JSON.stringify(event).includes('sk-heal-key'), 'no header in the event');
  const report = createRunRepairReport();
  report.add(event);
  const file = temporary.path('heal.html');
  await report.write(file);
  const html = readFileSync(file, 'utf8');
  assert.match(html, /retried after the provider&#39;s 400/);
  assert.match(html, /<h3>What the provider answered<\/h3>/);
});
