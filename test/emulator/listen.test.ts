import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { test } from 'node:test';
import { createEmulator } from '../../src/emulator/index.js';

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
