import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, test } from 'node:test';
import OpenAI from 'openai';
import type { Io } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';
import { check } from '../../src/core/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import { scrapeUntil } from './support/scrape-metrics.js';

const root = join(import.meta.dirname, '../..');
const KEY = 'sk-unstuck-cli-secret-9f8e7d6c5b4a';
const SECRET_TEXT = 'my bank PIN is 4921';

const emulator = createEmulator({ profile: 'openai' });
const upstream = await emulator.listen();
after(() => upstream.close());

const broken: OpenAI.ChatCompletionMessageParam[] = [
  { role: 'user', content: SECRET_TEXT },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
  },
  { role: 'user', content: 'forget it' },
];

/** Starts `unstuck proxy` as a real process, returns its URL once it says it is listening. */
async function startProxy(extra: string[] = [], options: { upstream?: string; env?: Record<string, string> } = {}) {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'src/cli/main.ts',
      'proxy',
      '--upstream',
      options.upstream ?? upstream.url,
      '--port',
      '0',
      ...extra,
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8');
  const listening = new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
      const line = stderr.split('\n').find((text) => text.includes('"listening"'));
      if (line !== undefined) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.once('exit', (code) => reject(new Error(`proxy exited with ${code}: ${stderr}`)));
  });
  const url = await listening;
  const stop = async (): Promise<{ code: number | null; stderr: string }> => {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    return { code, stderr };
  };
  return { url, stop };
}

test('`unstuck proxy` as a process: repairs, logs one JSON line per request without key or content, stops on SIGTERM', async () => {
  const proxy = await startProxy();
  const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: KEY, maxRetries: 0 });
  const completion = await client.chat.completions.create({ model: 'gpt-4o', messages: broken });
  assert.equal(completion.object, 'chat.completion');
  assert.deepEqual(emulator.requests.at(-1)?.violations, []);
  const health = await fetch(`${proxy.url}/healthz`);
  assert.equal(health.status, 200);
  await scrapeUntil(
    `${proxy.url}/metrics`,
    /unstuck_proxy_repairs_total\{rule="tool-calls-unanswered",wire="chat"\} 1/,
  );
  const { code, stderr } = await proxy.stop();
  assert.equal(code, 0);
  assert.ok(!stderr.includes(KEY), 'the key leaked into the log');
  assert.ok(!stderr.includes(SECRET_TEXT), 'message content leaked into the log');
  const lines = stderr
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const chat = lines.find((line) => line.path === '/v1/chat/completions');
  assert.equal(chat?.status, 200);
  assert.deepEqual(chat?.rules, ['tool-calls-unanswered']);
  assert.equal(typeof chat?.id, 'string');
  assert.equal(typeof chat?.durationMs, 'number');
  assert.equal(lines.filter((line) => line.path !== undefined && line.path !== '/metrics').length, 2); // chat, healthz
  assert.ok(lines.some((line) => line.path === '/metrics')); // scraped until the snapshot caught up: once or more
  assert.match(String(lines[0]?.url), /^http:\/\/127\.0\.0\.1:\d+$/);
});

test('`--log-bodies` logs the message content, still never the key', async () => {
  const proxy = await startProxy(['--log-bodies']);
  const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: KEY, maxRetries: 0 });
  await client.chat.completions.create({ model: 'gpt-4o', messages: broken });
  const { stderr } = await proxy.stop();
  assert.ok(stderr.includes(SECRET_TEXT));
  assert.ok(!stderr.includes(KEY));
});

function capture(): { io: Io; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  const controller = new AbortController();
  controller.abort();
  const io: Io = {
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text) },
    stdin: new PassThrough(),
    env: {},
    cwd: root,
    signal: controller.signal,
  };
  return { io, out: () => out, err: () => err };
}

test('bad input is one line on stderr and exit 2', async () => {
  for (const [argv, pattern] of [
    [['proxy'], /missing --upstream/],
    [['proxy', '--upstream', 'ftp://x'], /must be http or https/],
    [['proxy', '--upstream', 'not a url'], /not a URL/],
    [['proxy', '--upstream', 'https://user:pass@api.example.com'], /must not hold credentials/],
    [['proxy', '--upstream', 'http://127.0.0.1:1', '--port', '99999'], /--port must be a whole number/],
    [['proxy', '--upstream', 'http://127.0.0.1:1', '--max-body-bytes', 'lots'], /--max-body-bytes/],
    [['proxy', '--upstream', 'http://127.0.0.1:1', '--profile', 'gemini'], /unknown profile 'gemini'/],
    [
      ['proxy', '--upstream', 'claude=http://127.0.0.1:1'],
      /unknown wire 'claude' \(one of chat, anthropic, responses, gemini\)/,
    ],
    [['proxy', '--upstream', 'chat=http://a.test', '--upstream', 'chat=http://b.test'], /chat=… is given twice/],
    [['proxy', '--upstream', 'http://a.test', '--upstream', 'http://b.test'], /given twice; name the wire/],
    [['proxy', '--upstream', 'anthropic=ftp://x'], /--upstream anthropic= must be http or https/],
    [['proxy', '--upstream', 'https://g.test/?key=AIza'], /must not hold a query/],
  ] as const) {
    const { io, err } = capture();
    assert.equal(await run(argv, io), 2, argv.join(' '));
    assert.match(err(), pattern);
    assert.equal(err().trim().split('\n').length, 1, err());
  }
});

test('in-process: listens on 127.0.0.1 and returns 0 once io.signal is aborted', async () => {
  const { io, err } = capture();
  assert.equal(await run(['proxy', '--upstream', upstream.url, '--port', '0'], io), 0);
  assert.match(err(), /"url":"http:\/\/127\.0\.0\.1:\d+"/);
});

test('--help lists every option', async () => {
  const { io, out } = capture();
  assert.equal(await run(['proxy', '--help'], io), 0);
  for (const option of [
    '--upstream',
    '--port',
    '--host',
    '--profile',
    '--log-bodies',
    '--max-body-bytes',
    '--upstream-timeout-ms',
  ])
    assert.ok(out().includes(option), option);
});

test('`unstuck proxy` in front of an https upstream: repairs and streams over TLS; a certificate it cannot trust is a 502 naming why', async () => {
  const tls = join(import.meta.dirname, 'fixtures/tls');
  const seen: unknown[] = [];
  const server = createHttpsServer(
    { key: readFileSync(join(tls, 'key.pem')), cert: readFileSync(join(tls, 'cert.pem')) },
    (incoming, outgoing) => {
      let body = '';
      incoming.setEncoding('utf8');
      incoming.on('data', (chunk: string) => (body += chunk));
      incoming.on('end', () => {
        seen.push(JSON.parse(body));
        if (incoming.url?.endsWith('?stream')) {
          outgoing.writeHead(200, { 'content-type': 'text/event-stream' });
          outgoing.write('data: {"choices":[{"delta":{"content":"one"}}]}\n\n');
          setTimeout(() => outgoing.end('data: [DONE]\n\n'), 20);
          return;
        }
        outgoing.writeHead(200, { 'content-type': 'application/json' });
        outgoing.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            created: 0,
            model: 'm',
            choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          }),
        );
      });
    },
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  after(() => server.close());
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const body = JSON.stringify({ model: 'gpt-4o', messages: broken });

  const trusted = await startProxy([], { upstream: origin, env: { NODE_EXTRA_CA_CERTS: join(tls, 'cert.pem') } });
  try {
    const answer = await fetch(`${trusted.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body,
    });
    assert.equal(answer.status, 200);
    assert.equal(((await answer.json()) as { object: string }).object, 'chat.completion');
    const sent = seen.at(-1) as { messages: OpenAI.ChatCompletionMessageParam[] };
    assert.deepEqual(
      check(sent.messages as never, { profile: 'openai', scope: 'request' }),
      [],
      'the upstream got the repaired history',
    );
    const streamed = await fetch(`${trusted.url}/v1/chat/completions?stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    assert.equal(streamed.headers.get('content-type'), 'text/event-stream');
    assert.match(await streamed.text(), /"one"[\s\S]*\[DONE\]/);
  } finally {
    assert.equal((await trusted.stop()).code, 0);
  }

  const untrusted = await startProxy([], { upstream: origin });
  try {
    const refused = await fetch(`${untrusted.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    assert.equal(refused.status, 502);
    assert.match(
      ((await refused.json()) as { error: { message: string } }).error.message,
      /unreachable \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\)/,
    );
  } finally {
    await untrusted.stop();
  }
});
