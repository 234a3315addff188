import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { listenMisbehaving } from './support/misbehaving-upstream.js';
import { startProxyProcess } from './support/proxy-process.js';
import { rawRequest } from './support/raw-client.js';

/** `unstuck proxy` as a real process: what once killed or wedged it (a gzip answer, SIGTERM mid-stream,
 * an escaping error, a foreign Host), and what it does now. */

const root = join(import.meta.dirname, '../..');
const misbehaving = await listenMisbehaving();
after(() => misbehaving.close());

// On the old code the process died on the first `gzip-text-8m` (and `gzip-bomb`): the decoded body outruns the client.
test('the gzip answer that killed the process (Connection: close, decoding to more than the client takes at once) is relayed whole, and the process lives on', async () => {
  const proxy = await startProxyProcess(misbehaving.url);
  try {
    for (const scenario of [
      'gzip-text-8m',
      'gzip-text-1m',
      'gzip-large-length',
      'deflate-large-until-close',
      'br-large-chunked',
      'gzip-length-longer-than-body',
      'gzip-bomb',
    ]) {
      for (const slowMs of scenario === 'gzip-bomb' ? [0] : [0, 300]) {
        const answer = await rawRequest(`${proxy.url}/v1/models?s=${scenario}`, {
          ...(slowMs > 0 ? { slowMs } : {}),
          keep: scenario !== 'gzip-bomb',
        });
        assert.ok(answer.status === 200 || answer.status === 502, `${scenario}: ${answer.status}`);
        if (scenario.startsWith('gzip-text') || scenario === 'gzip-bomb') assert.equal(answer.cut, false, scenario);
        assert.equal(proxy.exited(), undefined, `the proxy died on ${scenario}: ${proxy.stderr()}`);
      }
    }
    assert.equal((await rawRequest(`${proxy.url}/healthz`)).status, 200);
  } finally {
    const { code, stderr } = await proxy.stop();
    assert.equal(code, 0);
    assert.doesNotMatch(stderr, /AssertionError|uncaught-error/);
  }
});

test('SIGTERM drains: a stream in flight ends whole, then the process exits 0 and says how many it cut', async () => {
  const upstream = createServer((incoming, outgoing) => {
    incoming.resume();
    outgoing.writeHead(200, { 'content-type': 'text/event-stream' });
    let sent = 0;
    const timer = setInterval(() => {
      sent += 1;
      outgoing.write(`data: ${sent}\n\n`);
      if (sent === 10) {
        clearInterval(timer);
        outgoing.end('data: [DONE]\n\n');
      }
    }, 50);
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  const proxy = await startProxyProcess(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, [
    '--drain-timeout-ms',
    '5000',
  ]);
  try {
    const stream = rawRequest(`${proxy.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const stopped = proxy.stop('SIGTERM');
    const answer = await stream;
    assert.equal(answer.cut, false, 'the stream was cut although the proxy said it drains');
    assert.match(answer.body.toString(), /data: 10\n\ndata: \[DONE\]\n\n$/);
    const { code, stderr } = await stopped;
    assert.equal(code, 0);
    const lines = stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(
      lines.find((line) => line.event === 'draining'),
      { event: 'draining', inFlight: 1, drainMs: 5000 },
    );
    assert.deepEqual(
      lines.find((line) => line.event === 'stopped'),
      { event: 'stopped', cut: 0 },
    );
  } finally {
    await proxy.stop('SIGKILL');
    upstream.closeAllConnections();
    upstream.close();
  }
});

test('the process guard: an error escaping every handler is one log line, and the process goes on', async () => {
  const script = [
    "import { guardProcess } from './src/cli/commands/proxy.ts';",
    'guardProcess((entry) => process.stdout.write(JSON.stringify(entry) + "\\n"));',
    "setImmediate(() => { throw new TypeError('thrown from an event handler'); });",
    "void Promise.reject(new Error('a rejection nobody handled'));",
    "setTimeout(() => process.stdout.write('alive\\n'), 100);",
  ].join('\n');
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0);
  const lines = out.trim().split('\n');
  assert.equal(lines.at(-1), 'alive');
  const entries = lines.slice(0, -1).map((line) => JSON.parse(line) as { event: string; error: string });
  assert.deepEqual(
    entries.map((entry) => entry.event),
    ['uncaught-error', 'uncaught-error'],
  );
  assert.deepEqual(entries.map((entry) => entry.error).sort(), [
    'Error: a rejection nobody handled',
    'TypeError: thrown from an event handler',
  ]);
});

test('--allow-host names are served, others refused; a bad one is a usage error', async () => {
  const proxy = await startProxyProcess(misbehaving.url, [
    '--allow-host',
    'host.docker.internal',
    '--allow-host',
    'proxy.lan',
  ]);
  try {
    assert.equal(
      (await rawRequest(`${proxy.url}/healthz`, { headers: { host: 'host.docker.internal:8787' } })).status,
      200,
    );
    assert.equal((await rawRequest(`${proxy.url}/healthz`, { headers: { host: 'proxy.lan' } })).status, 200);
    assert.equal(
      (await rawRequest(`${proxy.url}/metrics`, { headers: { host: 'rebind.attacker.example' } })).status,
      421,
    );
  } finally {
    await proxy.stop();
  }
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'proxy', '--upstream', misbehaving.url, '--allow-host', 'http://x/'],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 2);
  assert.match(err, /^unstuck proxy: --allow-host must be a host name/);
  assert.equal(err.trim().split('\n').length, 1);
});
