import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createEmulator } from '../../src/emulator/index.js';
import { readSse } from './read-sse.js';

const URL_BASE = 'http://emulator.test';

function post(body: unknown, path = '/v1/chat/completions'): Request {
  return new Request(`${URL_BASE}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const valid = [{ role: 'user', content: 'hi' }];
const unanswered = [
  { role: 'user', content: 'weather?' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
  },
  { role: 'user', content: 'never mind' },
];

describe('createEmulator: requests checked by the core', () => {
  test('an empty script answers "ok" to a valid request', async () => {
    const emulator = createEmulator();
    const response = await emulator.handle(post({ model: 'deepseek-chat', messages: valid }));
    assert.equal(response.status, 200);
    const body = (await response.json()) as any;
    assert.equal(body.object, 'chat.completion');
    assert.equal(body.choices[0].message.content, 'ok');
    assert.equal(body.choices[0].finish_reason, 'stop');
    assert.equal(emulator.requests.length, 1);
    assert.deepEqual(emulator.requests[0]?.violations, []);
    assert.equal(emulator.requests[0]?.status, 200);
  });

  test("an unanswered tool call gets DeepSeek's own 400 and does not use up a script step", async () => {
    const emulator = createEmulator({ profile: 'deepseek', script: [{ text: 'scripted' }] });
    const response = await emulator.handle(post({ model: 'deepseek-chat', messages: unanswered }));
    assert.equal(response.status, 400);
    const body = (await response.json()) as any;
    assert.match(body.error.message, /must be followed by tool messages responding to each 'tool_call_id'/);
    assert.equal(emulator.requests[0]?.status, 400);
    assert.equal(emulator.requests[0]?.violations[0]?.rule, 'tool-calls-unanswered');
    const next = (await (await emulator.handle(post({ model: 'deepseek-chat', messages: valid }))).json()) as any;
    assert.equal(next.choices[0].message.content, 'scripted');
  });

  test('/chat/completions is served too, and the script is answered in order, pushed steps last', async () => {
    const emulator = createEmulator({ script: [{ text: 'one' }] });
    emulator.push({ text: 'two' });
    const texts: string[] = [];
    for (const path of ['/chat/completions', '/v1/chat/completions', '/chat/completions']) {
      const body = (await (await emulator.handle(post({ messages: valid }, path))).json()) as any;
      texts.push(body.choices[0].message.content);
    }
    assert.deepEqual(texts, ['one', 'two', 'ok']);
  });

  test('tool calls and reasoning come back in the non-streaming shape', async () => {
    const emulator = createEmulator({
      script: [
        {
          reasoning: 'think',
          toolCalls: [
            { name: 'read', arguments: '{"path":"a"}' },
            { id: 'mine', name: 'list', arguments: '{}' },
          ],
        },
      ],
    });
    const body = (await (await emulator.handle(post({ messages: valid }))).json()) as any;
    const message = body.choices[0].message;
    assert.equal(body.choices[0].finish_reason, 'tool_calls');
    assert.equal(message.content, null);
    assert.equal(message.reasoning_content, 'think');
    assert.equal(message.tool_calls.length, 2);
    assert.equal(message.tool_calls[0].type, 'function');
    assert.equal(message.tool_calls[0].function.name, 'read');
    assert.equal(message.tool_calls[0].function.arguments, '{"path":"a"}');
    assert.match(message.tool_calls[0].id, /^call_/);
    assert.equal(message.tool_calls[1].id, 'mine');
    assert.ok(body.usage.prompt_tokens > 0);
  });

  test('a non-JSON body gets a clean JSON 400, a body over the limit a 413', async () => {
    const emulator = createEmulator({ maxBodyBytes: 1000 });
    const broken = await emulator.handle(post('{"messages": ['));
    assert.equal(broken.status, 400);
    assert.match(((await broken.json()) as any).error.message, /parse the request body as JSON/);
    const big = await emulator.handle(post({ messages: [{ role: 'user', content: 'x'.repeat(2000) }] }));
    assert.equal(big.status, 413);
    assert.match(((await big.json()) as any).error.message, /too large/);
    const notObject = await emulator.handle(post([1, 2]));
    assert.equal(notObject.status, 400);
    assert.deepEqual(
      emulator.requests.map((request) => request.status),
      [400, 413, 400],
    );
  });

  test('unknown paths and methods get JSON errors; GET /v1/models lists a model', async () => {
    const emulator = createEmulator();
    assert.equal(
      (await emulator.handle(new Request(`${URL_BASE}/v1/embeddings`, { method: 'POST', body: '{}' }))).status,
      404,
    );
    assert.equal((await emulator.handle(new Request(`${URL_BASE}/v1/chat/completions`))).status, 405);
    const models = (await (await emulator.handle(new Request(`${URL_BASE}/v1/models`))).json()) as any;
    assert.equal(models.object, 'list');
    assert.equal(typeof models.data[0].id, 'string');
  });
});

describe('createEmulator: streaming', () => {
  test('chunks rebuild the reasoning, the text and every tool call, then [DONE]', async () => {
    const emulator = createEmulator({
      script: [
        {
          reasoning: 'let me think',
          text: 'I will read two files',
          toolCalls: [
            { name: 'read', arguments: '{"path":"a.txt"}' },
            { name: 'read', arguments: '{"path":"b.txt"}' },
          ],
          stream: { chunkSize: 3 },
        },
      ],
    });
    const response = await emulator.handle(post({ messages: valid, stream: true }));
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
    const { events, error } = await readSse(response);
    assert.equal(error, undefined);
    assert.equal(events.at(-1), '[DONE]');
    let reasoning = '';
    let text = '';
    const calls: { id: string; name: string; arguments: string }[] = [];
    let finish: string | null = null;
    let usage: unknown;
    for (const data of events.slice(0, -1)) {
      const chunk = JSON.parse(data);
      assert.equal(chunk.object, 'chat.completion.chunk');
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (choice === undefined) continue;
      finish = choice.finish_reason ?? finish;
      reasoning += choice.delta.reasoning_content ?? '';
      text += choice.delta.content ?? '';
      for (const delta of choice.delta.tool_calls ?? []) {
        calls[delta.index] ??= { id: '', name: '', arguments: '' };
        const call = calls[delta.index]!;
        if (delta.id) call.id = delta.id;
        if (delta.function?.name) call.name = delta.function.name;
        call.arguments += delta.function?.arguments ?? '';
      }
    }
    assert.equal(reasoning, 'let me think');
    assert.equal(text, 'I will read two files');
    assert.deepEqual(
      calls.map((call) => [call.name, call.arguments]),
      [
        ['read', '{"path":"a.txt"}'],
        ['read', '{"path":"b.txt"}'],
      ],
    );
    assert.ok(calls.every((call) => call.id.startsWith('call_')));
    assert.notEqual(calls[0]?.id, calls[1]?.id);
    assert.equal(finish, 'tool_calls');
    assert.ok(usage !== undefined, 'DeepSeek sends usage on the finish chunk');
  });

  test('OpenAI sends usage in a separate chunk only when include_usage is asked for', async () => {
    const emulator = createEmulator({ profile: 'openai' });
    const plain = await readSse(await emulator.handle(post({ messages: valid, stream: true })));
    assert.ok(plain.events.slice(0, -1).every((data) => JSON.parse(data).usage === undefined));
    const withUsage = await readSse(
      await emulator.handle(post({ messages: valid, stream: true, stream_options: { include_usage: true } })),
    );
    const last = JSON.parse(withUsage.events.at(-2) ?? '{}');
    assert.deepEqual(last.choices, []);
    assert.ok(last.usage.total_tokens > 0);
  });

  test('delays space the chunks out', async () => {
    const emulator = createEmulator({ script: [{ text: 'abcdef', stream: { chunkSize: 2, delayMs: 15 } }] });
    const started = performance.now();
    const { events } = await readSse(await emulator.handle(post({ messages: valid, stream: true })));
    assert.ok(events.length >= 5);
    assert.ok(performance.now() - started >= 50, 'at least four delayed chunks');
  });
});

describe('createEmulator: faults', () => {
  test('429 carries Retry-After; 500 and 503 are JSON errors; each uses up its step', async () => {
    const emulator = createEmulator({
      script: [
        { fault: { status: 429, retryAfter: 2 } },
        { fault: { status: 500 } },
        { fault: { status: 503 } },
        { text: 'recovered' },
      ],
    });
    const limited = await emulator.handle(post({ messages: valid }));
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '2');
    assert.equal(typeof ((await limited.json()) as any).error.message, 'string');
    assert.equal((await emulator.handle(post({ messages: valid }))).status, 500);
    assert.equal((await emulator.handle(post({ messages: valid }))).status, 503);
    const body = (await (await emulator.handle(post({ messages: valid }))).json()) as any;
    assert.equal(body.choices[0].message.content, 'recovered');
    assert.deepEqual(
      emulator.requests.map((request) => request.status),
      [429, 500, 503, 200],
    );
  });

  test('a stall holds the answer back, and a client that gives up gets an abort', async () => {
    const emulator = createEmulator({ script: [{ fault: { stall: 40 }, text: 'late' }, { fault: { stall: 10_000 } }] });
    const started = performance.now();
    const late = (await (
      await emulator.fetch(`${URL_BASE}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ messages: valid }),
      })
    ).json()) as any;
    assert.equal(late.choices[0].message.content, 'late');
    assert.ok(performance.now() - started >= 35);
    const attempt = emulator.fetch(`${URL_BASE}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ messages: valid }),
      signal: AbortSignal.timeout(30),
    });
    await assert.rejects(attempt, (error: Error) => error.name === 'TimeoutError');
  });

  test('a disconnect mid-stream breaks the body after the given number of events', async () => {
    const emulator = createEmulator({
      script: [
        { text: 'a long answer that never finishes', stream: { chunkSize: 4 }, fault: { disconnectAfterChunks: 3 } },
      ],
    });
    const { events, error } = await readSse(await emulator.handle(post({ messages: valid, stream: true })));
    assert.equal(events.length, 3);
    assert.ok(error instanceof Error);
    assert.ok(!events.includes('[DONE]'));
  });

  test('overloaded mid-stream: an error data event after the given chunks, then the stream ends; non-streaming a 503', async () => {
    const emulator = createEmulator({
      script: [
        { text: 'abcdefgh', stream: { chunkSize: 2 }, fault: { overloadedAfterChunks: 2 } },
        { fault: { overloadedAfterChunks: 0 } },
      ],
    });
    const { events, error } = await readSse(await emulator.handle(post({ messages: valid, stream: true })));
    assert.equal(error, undefined);
    assert.equal(events.length, 3);
    assert.equal(JSON.parse(events[2] ?? '{}').error.type, 'server_error');
    assert.ok(!events.includes('[DONE]'));
    assert.equal((await emulator.handle(post({ messages: valid }))).status, 503);
  });

  test('a disconnect on a non-streaming request breaks the body before any byte', async () => {
    const emulator = createEmulator({ script: [{ fault: { disconnectAfterChunks: 0 } }] });
    const response = await emulator.handle(post({ messages: valid }));
    await assert.rejects(response.text());
  });
});

describe('createEmulator: listen on loopback', () => {
  test('serves the same answers over a socket, streams, and drops the connection on a disconnect fault', async () => {
    const emulator = createEmulator({
      script: [
        { text: 'over the wire' },
        { text: 'streamed', stream: { chunkSize: 2 } },
        { text: 'cut short here', stream: { chunkSize: 2 }, fault: { disconnectAfterChunks: 2 } },
      ],
    });
    const server = await emulator.listen();
    try {
      assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const plain = (await (
        await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ messages: valid }) })
      ).json()) as any;
      assert.equal(plain.choices[0].message.content, 'over the wire');
      const streamed = await readSse(
        await fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          body: JSON.stringify({ messages: valid, stream: true }),
        }),
      );
      assert.equal(streamed.events.at(-1), '[DONE]');
      const cut = await readSse(
        await fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          body: JSON.stringify({ messages: valid, stream: true }),
        }),
      );
      assert.ok(cut.error !== undefined, 'the socket was destroyed mid-stream');
      assert.ok(!cut.events.includes('[DONE]'));
      const invalid = await fetch(`${server.url}/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ messages: unanswered }),
      });
      assert.equal(invalid.status, 400);
      assert.match(((await invalid.json()) as any).error.message, /tool_call_id/);
      const notJson = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: 'hello' });
      assert.equal(notJson.status, 400);
      assert.equal(typeof ((await notJson.json()) as any).error.message, 'string');
    } finally {
      await server.close();
    }
  });
});
