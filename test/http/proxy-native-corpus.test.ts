import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import type { ProxyLogEntry } from '../../src/http/index.js';
import { createNodeFetch, createProxyHandler, serveProxy } from '../../src/http/index.js';
import { useListeningEmulator } from '../support/listening-emulator.js';

/**
 * Every Responses and Gemini case of the shared corpus through the proxy, in front of the strict
 * emulator on 127.0.0.1: once through `createProxyHandler` (with `createNodeFetch`) and once
 * through `serveProxy` (the native relay on a socket). Straight at the emulator each gets the
 * provider's 400; through the proxy a 200, the emulator saw exactly one request and it was valid,
 * and the log line names the wire and the rules repaired.
 */
const directory = new URL('../fixtures/shared/corpus/', import.meta.url);
const cases = readdirSync(directory)
  .filter((name) => name.endsWith('.json'))
  .map((name) => ({
    name,
    ...(JSON.parse(readFileSync(new URL(name, directory), 'utf8')) as { format: string; messages: unknown[] }),
  }))
  .filter((entry) => entry.format === 'gemini' || entry.format === 'openai-responses');

const served = useListeningEmulator({ wires: ['responses', 'gemini'] });
const { emulator } = served;

function requestOf(entry: (typeof cases)[number]): { path: string; init: RequestInit } {
  if (entry.format === 'gemini')
    return {
      path: '/v1beta/models/gemini-2.5-pro:generateContent',
      init: {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': 'test-key' },
        body: JSON.stringify({ contents: entry.messages }),
      },
    };
  return {
    path: '/v1/responses',
    init: {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
      body: JSON.stringify({ model: 'gpt-5', input: entry.messages }),
    },
  };
}

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers) await close();
});

type Send = (path: string, init: RequestInit) => Promise<Response>;
const carriers: [string, (logs: ProxyLogEntry[]) => Promise<Send>][] = [
  [
    'createProxyHandler with createNodeFetch',
    async (logs) => {
      const handler = createProxyHandler({
        upstream: served.url,
        fetch: createNodeFetch(),
        log: (entry) => logs.push(entry),
      });
      return (path, init) => handler(new Request(`http://proxy.test${path}`, init));
    },
  ],
  [
    'serveProxy (native)',
    async (logs) => {
      const server = await serveProxy({ upstream: served.url, log: (entry) => logs.push(entry) }, { port: 0 });
      closers.push(server.close);
      assert.equal(server.native, true);
      return (path, init) => fetch(`${server.url}${path}`, init);
    },
  ],
];

test('the corpus has its three Gemini and two Responses cases', () => {
  assert.deepEqual(
    cases.map((entry) => `${entry.name.slice(0, 3)} ${entry.format}`),
    ['028 gemini', '029 gemini', '031 gemini', '044 openai-responses', '045 openai-responses'],
  );
});

for (const [carrier, start] of carriers) {
  for (const entry of cases) {
    test(`${carrier}, ${entry.name}: straight a 400; through the proxy a 200, the emulator saw only valid requests`, async () => {
      const { path, init } = requestOf(entry);
      const straight = await fetch(`${served.url}${path}`, init);
      assert.equal(straight.status, 400, await straight.text());

      const logs: ProxyLogEntry[] = [];
      const send = await start(logs);
      emulator.push({ text: 'answered after the repair' });
      const before = emulator.requests.length;
      const answer = await send(path, init);
      const text = await answer.text();
      assert.equal(answer.status, 200, text);
      assert.match(text, /answered after the repair/);
      assert.deepEqual(
        emulator.requests.slice(before).map((request) => [request.status, request.violations]),
        [[200, []]],
        'the emulator saw one request, valid',
      );
      const wire = entry.format === 'gemini' ? 'gemini' : 'responses';
      const line = logs.find((log) => log.wire === wire);
      assert.ok(line, `a log line for the ${wire} wire: ${JSON.stringify(logs)}`);
      assert.ok(line.rules.length > 0, 'the log line names the rules repaired');
    });
  }
}
