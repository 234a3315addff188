import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { test } from 'node:test';
import { createEmulator } from '../../src/emulator/index.js';
import { listenOn } from '../../src/emulator/listen.js';

/** The emulator's node:http adapter, over raw sockets: what a client really receives. */

function post(
  url: string,
  body: unknown,
  options: { slow?: boolean } = {},
): Promise<{ received: string; complete: boolean; status: number }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json' },
      },
      (response) => {
        let received = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          received += chunk;
          if (options.slow === true) {
            response.pause();
            setTimeout(() => response.resume(), 1);
          }
        });
        response.on('error', () => undefined);
        response.on('close', () =>
          resolve({ received, complete: response.complete, status: response.statusCode ?? 0 }),
        );
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

const hello = [{ role: 'user', content: 'hello' }];

test('a scripted disconnect mid-stream still delivers the events written before it, then cuts the response', async (t) => {
  // No delay between events: all of them are queued on the socket in the same turn as the disconnect.
  const emulator = createEmulator({
    script: [{ text: 'abcdefghijklmnopqrstuvwxyz', stream: { chunkSize: 2 }, fault: { disconnectAfterChunks: 4 } }],
  });
  const server = await emulator.listen();
  t.after(() => server.close());
  const { received, complete, status } = await post(server.url, { model: 'gpt-4o', stream: true, messages: hello });
  assert.equal(status, 200);
  const events = received.split('\n').filter((line) => line.startsWith('data: '));
  assert.equal(events.length, 4, received);
  assert.ok(!received.includes('[DONE]'));
  assert.equal(complete, false, 'the response must end incomplete, as a dropped connection does');
});

test('a long stream to a slow reader leaves no listener behind (no MaxListenersExceeded warning)', async (t) => {
  const warnings: string[] = [];
  const onWarning = (warning: Error): void => {
    warnings.push(`${warning.name}: ${warning.message}`);
  };
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  const big = 'x'.repeat(600_000);
  const emulator = createEmulator({ script: [{ text: big, stream: { chunkSize: 2000 } }] });
  const server = await emulator.listen();
  t.after(() => server.close());
  const { received, complete } = await post(
    server.url,
    { model: 'gpt-4o', stream: true, messages: hello },
    { slow: true },
  );
  assert.equal(complete, true);
  assert.match(received, /data: \[DONE\]/);
  await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
  assert.deepEqual(
    warnings.filter((warning) => warning.startsWith('MaxListenersExceededWarning')),
    [],
  );
});

/** A chunked upload of `blocks` blocks of 256 KiB at full speed, over a raw socket: what the client reads back. */
function upload(url: string, blocks: number): Promise<string> {
  const target = new URL(url);
  const socket = connect(Number(target.port), target.hostname);
  const block = `${(256 * 1024).toString(16)}\r\n${'a'.repeat(256 * 1024)}\r\n`;
  let answer = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (answer += chunk));
  socket.on('error', () => undefined);
  socket.write(
    'POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
  );
  let sent = 0;
  const more = (): void => {
    while (sent < blocks && !socket.destroyed) {
      sent += 1;
      if (!socket.write(block)) {
        socket.once('drain', more);
        return;
      }
    }
    if (!socket.destroyed) socket.end('0\r\n\r\n');
  };
  more();
  return new Promise((resolve) => socket.once('close', () => resolve(answer)));
}

test('a body over the limit sent at full speed: the client reads its 413 every time (the shared carrier reads the rest)', async (t) => {
  const emulator = createEmulator({ profile: 'openai', maxBodyBytes: 1024 * 1024 });
  const server = await emulator.listen();
  t.after(() => server.close());
  for (let attempt = 0; attempt < 10; attempt += 1) {
    const answer = await upload(server.url, 40); // 10 MiB against a 1 MiB limit
    assert.match(answer, /^HTTP\/1\.1 413 /, `attempt ${attempt}: ${JSON.stringify(answer.slice(0, 60))}`);
  }
});

test("a handler that throws is answered with the emulator's own 500, not a dropped connection", async (t) => {
  const server = await listenOn(async () => {
    throw new Error('boom');
  });
  t.after(() => server.close());
  const response = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
  assert.equal(response.status, 500);
  assert.deepEqual(await response.json(), {
    error: { message: 'emulator failure: boom', type: 'server_error', param: null, code: null },
  });
});
