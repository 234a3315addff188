import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ProxyLogEntry } from '../../src/http/index.js';
import { createNodeFetch, createProxyHandler } from '../../src/http/index.js';
import { useListeningEmulator } from '../support/listening-emulator.js';

/**
 * The proxy on the Responses and Gemini wires (the same wire table as the sanitizing fetch), in
 * front of the strict emulator on 127.0.0.1: each poisoned history gets a 200 and the emulator
 * (the core's rules for that format, at request scope) sees only valid requests. The control
 * sends the same body straight to the emulator and gets the provider's 400.
 */

const served = useListeningEmulator({ wires: ['responses', 'gemini'] });
const { emulator } = served;
const GEMINI_KEY = 'AIza-proxy-test-0a1b2c';

function proxy(logs: ProxyLogEntry[] = []) {
  const handler = createProxyHandler({ upstream: served.url, fetch: createNodeFetch(), log: (e) => logs.push(e) });
  return (path: string, body: unknown, headers: Record<string, string>) =>
    handler(
      new Request(`http://proxy.test${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }),
    );
}

const user = { role: 'user', content: 'list the files' };
const call = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"ls"}' };
const output = { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' };
const RESPONSES: [string, unknown[]][] = [
  ['a call with no output', [user, call, user]],
  ['an output whose call is gone', [user, output, user]],
  ['the same function_call recorded twice', [user, call, output, call, output]],
];

const ask = { role: 'user', parts: [{ text: 'read notes.md' }] };
const functionCall = { role: 'model', parts: [{ functionCall: { name: 'read_file', args: { path: 'notes.md' } } }] };
const functionResponse = {
  role: 'user',
  parts: [{ functionResponse: { name: 'read_file', response: { content: '42' } } }],
};
const GEMINI: [string, unknown[]][] = [
  ['a function call with no response', [ask, functionCall, ask]],
  [
    'two responses for one call',
    [ask, functionCall, { role: 'user', parts: [...functionResponse.parts, ...functionResponse.parts] }],
  ],
];

describe('the proxy on the Responses wire', () => {
  for (const [name, input] of RESPONSES) {
    test(`${name}: straight at the emulator a 400; through the proxy a 200, and the emulator saw it valid`, async () => {
      const headers = { authorization: 'Bearer sk-test' };
      const straight = await fetch(`${served.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ model: 'gpt-5-codex', input }),
      });
      assert.equal(straight.status, 400);
      const error = (await straight.json()) as { error: { type: string; param: string } };
      assert.equal(error.error.type, 'invalid_request_error');
      const logs: ProxyLogEntry[] = [];
      const answer = await proxy(logs)('/v1/responses', { model: 'gpt-5-codex', input }, headers);
      assert.equal(answer.status, 200, await answer.clone().text());
      const last = emulator.requests[emulator.requests.length - 1];
      assert.deepEqual(last?.violations, []);
      assert.equal(logs[0]?.wire, 'responses');
      assert.ok((logs[0]?.rules.length ?? 0) > 0, 'the log names the rules repaired');
    });
  }
});

describe('the proxy on the Gemini wire', () => {
  for (const [name, contents] of GEMINI) {
    test(`${name}: straight at the emulator a 400; through the proxy a 200; the key never in the log`, async () => {
      const path = `/v1beta/models/gemini-2.5-pro:generateContent?key=${GEMINI_KEY}`;
      const straight = await fetch(`${served.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ contents }),
      });
      assert.equal(straight.status, 400);
      assert.equal(((await straight.json()) as { error: { status: string } }).error.status, 'INVALID_ARGUMENT');
      const logs: ProxyLogEntry[] = [];
      const answer = await proxy(logs)(path, { contents }, {});
      assert.equal(answer.status, 200, await answer.clone().text());
      assert.deepEqual(emulator.requests[emulator.requests.length - 1]?.violations, []);
      assert.equal(logs[0]?.wire, 'gemini');
      assert.ok(!JSON.stringify(logs).includes(GEMINI_KEY), 'the ?key= value is redacted in the logged path');
    });
  }

  test("an error the proxy answers itself comes in Google's shape on this wire", async () => {
    const handler = createProxyHandler({ upstream: 'http://127.0.0.1:1', fetch: createNodeFetch() });
    const answer = await handler(
      new Request('http://proxy.test/v1beta/models/gemini-2.5-pro:generateContent', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': GEMINI_KEY },
        body: JSON.stringify({ contents: [ask] }),
      }),
    );
    assert.equal(answer.status, 502);
    const body = (await answer.json()) as { error: { code: number; status: string; message: string } };
    assert.equal(body.error.code, 502);
    assert.equal(body.error.status, 'UNAVAILABLE');
    assert.ok(!body.error.message.includes(GEMINI_KEY));
  });
});

/**
 * The heal on these wires: the proxy's first pass leaves a request whose fault only the provider
 * can tell (it goes out as it came); on the provider's 400 the strongest repair of it, told by the
 * path's model, is sent once more. Each shape straight at the emulator is its 400.
 */
describe('the heal on the Responses and Gemini wires: one stronger retry on the wire’s own 400', () => {
  test('Responses: an fc_ item the API produced with reasoning, sent without it — the 400 names it, the retry drops the id', async () => {
    const headers = { authorization: 'Bearer sk-test', 'content-type': 'application/json' };
    emulator.push({
      reasoning: 'list first',
      toolCalls: [{ id: 'call_h1', name: 'exec_command', arguments: '{"cmd":"ls"}' }],
    });
    const first = await fetch(`${served.url}/v1/responses`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'gpt-5-codex', input: [user] }),
    });
    const produced = ((await first.json()) as { output: { type: string; id: string }[] }).output;
    const fc = produced.find((item) => item.type === 'function_call') as { id: string };
    assert.match(fc.id, /^fc_/);
    // The client kept the call with its server id but not the reasoning item before it (continuedev/continue#10018).
    const input = [user, fc, { type: 'function_call_output', call_id: 'call_h1', output: 'a.txt' }];
    const straight = await fetch(`${served.url}/v1/responses`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'gpt-5-codex', input }),
    });
    assert.equal(straight.status, 400);
    assert.match(
      ((await straight.json()) as { error: { message: string } }).error.message,
      /^Item 'fc_\S+' of type 'function_call' was provided without its required 'reasoning' item: 'rs_\S+'\.$/,
    );
    emulator.push({ text: 'healed' });
    const logs: ProxyLogEntry[] = [];
    const before = emulator.requests.length;
    const answer = await proxy(logs)('/v1/responses', { model: 'gpt-5-codex', input }, headers);
    assert.equal(answer.status, 200, await answer.clone().text());
    const seen = emulator.requests.slice(before);
    assert.deepEqual(
      seen.map((request) => request.status),
      [400, 200],
    );
    assert.deepEqual(seen[0]?.body, { model: 'gpt-5-codex', input }, 'the first attempt went out as it came');
    const healed = (seen[1]?.body as { input: Record<string, unknown>[] } | undefined)?.input ?? [];
    assert.equal(healed[1]?.['id'], undefined);
    assert.equal(healed[1]?.['call_id'], 'call_h1');
    assert.equal(logs[0]?.healRetry, true);
    assert.deepEqual(logs[0]?.rules, ['reasoning-item-missing']);
  });

  test('Gemini: a final model turn on gemini-3.8-flash (no prefill there) — the 400, then the retry without it; on gemini-2.5-pro it is a prefill', async () => {
    const contents = [ask, { role: 'model', parts: [{ text: 'Sure, the notes say' }] }];
    const path = (model: string) => `/v1beta/models/${model}:generateContent`;
    const headers = { 'x-goog-api-key': GEMINI_KEY };
    const straight = await fetch(`${served.url}${path('gemini-3.8-flash')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ contents }),
    });
    assert.equal(straight.status, 400);
    assert.deepEqual(await straight.json(), {
      error: { code: 400, message: 'Requests ending with a model turn are not supported.', status: 'INVALID_ARGUMENT' },
    });
    const logs: ProxyLogEntry[] = [];
    const before = emulator.requests.length;
    const answer = await proxy(logs)(path('gemini-3.8-flash'), { contents }, headers);
    assert.equal(answer.status, 200, await answer.clone().text());
    const seen = emulator.requests.slice(before);
    assert.deepEqual(
      seen.map((request) => request.status),
      [400, 200],
    );
    assert.deepEqual((seen[1]?.body as { contents: unknown[] } | undefined)?.contents, [ask]);
    assert.equal(logs[0]?.healRetry, true);
    assert.deepEqual(logs[0]?.rules, ['ends-with-assistant']);
    // The same contents to a model that continues a final model turn: valid, one attempt, untouched.
    const prefill = await proxy()(path('gemini-2.5-pro'), { contents }, headers);
    assert.equal(prefill.status, 200);
    assert.deepEqual(emulator.requests[emulator.requests.length - 1]?.body, { contents });
  });

  test('a 400 the stronger repair cannot mend comes back after one attempt (no retry that would fail the same way)', async () => {
    const logs: ProxyLogEntry[] = [];
    const before = emulator.requests.length;
    const contents = [{ role: 'model', parts: [{ text: 'only the model' }] }];
    const answer = await proxy(logs)(
      '/v1beta/models/gemini-3.8-flash:generateContent',
      { contents },
      {
        'x-goog-api-key': GEMINI_KEY,
      },
    );
    assert.equal(answer.status, 400);
    assert.equal(emulator.requests.length - before, 1);
    assert.equal(logs[0]?.healRetry, false);
  });
});
