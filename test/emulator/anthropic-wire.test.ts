import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { createEmulator } from '../../src/emulator/index.js';
import { readSse } from './read-sse.js';

const URL_BASE = 'http://emulator.test';
const catalogue = JSON.parse(readFileSync(new URL('../fixtures/shared/rules.json', import.meta.url), 'utf8')) as {
  provider: string;
  id: string;
  match: string;
}[];
const matchOf = (id: string): RegExp =>
  new RegExp(catalogue.find((entry) => entry.provider === 'anthropic' && entry.id === id)?.match ?? 'no such entry');

const HEADERS = { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' };

function post(body: unknown, path = '/v1/messages?beta=true', headers: Record<string, string> = HEADERS): Request {
  return new Request(`${URL_BASE}${path}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const request = (messages: unknown[], extra: Record<string, unknown> = {}) => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  messages,
  ...extra,
});
const hello = [{ role: 'user', content: 'hello' }];
const read = { type: 'tool_use', id: 'toolu_01A', name: 'Read', input: { file_path: '/tmp/a.txt' } };
/** The poisoning Claude Code does not heal by itself: a tool_use beside a whitespace-only text block (hermes-agent#70475's shape). */
const whitespaceBesideCall = [
  { role: 'user', content: 'read a.txt' },
  { role: 'assistant', content: [{ type: 'text', text: '  \n' }, read] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A', content: 'hello' }] },
];

/** Rebuilds the message from Anthropic's stream events, checking their order as the SDKs do. */
function assemble(events: string[]): { message: any; types: string[] } {
  const types: string[] = [];
  let message: any;
  const partial: string[] = [];
  for (const data of events) {
    const event = JSON.parse(data);
    types.push(event.type);
    if (event.type === 'message_start') message = { ...event.message, content: [] };
    else if (event.type === 'content_block_start') {
      assert.equal(event.index, message.content.length, 'blocks start in order');
      message.content.push({ ...event.content_block });
      partial[event.index] = '';
    } else if (event.type === 'content_block_delta') {
      const block = message.content[event.index];
      if (event.delta.type === 'text_delta') block.text += event.delta.text;
      else if (event.delta.type === 'thinking_delta') block.thinking += event.delta.thinking;
      else if (event.delta.type === 'signature_delta') block.signature = event.delta.signature;
      else if (event.delta.type === 'input_json_delta') partial[event.index] += event.delta.partial_json;
      else assert.fail(`unknown delta ${event.delta.type}`);
    } else if (event.type === 'content_block_stop') {
      const block = message.content[event.index];
      if (block.type === 'tool_use') block.input = JSON.parse(partial[event.index] ?? '');
    } else if (event.type === 'message_delta') {
      Object.assign(message, event.delta);
      message.usage = { ...message.usage, ...event.usage };
    }
  }
  return { message, types };
}

describe('emulator, Anthropic wire: requests checked by the core', () => {
  test('a valid request gets a message object; the query (?beta=true) is accepted', async () => {
    const emulator = createEmulator({ script: [{ text: 'hi there' }] });
    const response = await emulator.handle(post(request(hello)));
    assert.equal(response.status, 200);
    const body = (await response.json()) as any;
    assert.equal(body.type, 'message');
    assert.equal(body.role, 'assistant');
    assert.match(body.id, /^msg_/);
    assert.deepEqual(body.content, [{ type: 'text', text: 'hi there' }]);
    assert.equal(body.stop_reason, 'end_turn');
    assert.equal(body.stop_sequence, null);
    assert.ok(body.usage.input_tokens > 0 && body.usage.output_tokens > 0);
    assert.equal(emulator.requests[0]?.wire, 'anthropic');
    assert.equal(emulator.requests[0]?.path, '/v1/messages');
  });

  test("a tool_use beside a whitespace-only text block gets Anthropic's 400 with the catalogue text, and uses up no step", async () => {
    const emulator = createEmulator({ script: [{ text: 'scripted' }] });
    const response = await emulator.handle(post(request(whitespaceBesideCall)));
    assert.equal(response.status, 400);
    const body = (await response.json()) as any;
    assert.deepEqual(Object.keys(body), ['type', 'error']);
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'invalid_request_error');
    assert.match(body.error.message, matchOf('text-block-empty'));
    assert.equal(emulator.requests[0]?.violations[0]?.rule, 'text-block-empty');
    const next = (await (await emulator.handle(post(request(hello)))).json()) as any;
    assert.equal(next.content[0].text, 'scripted');
  });

  test("an unanswered tool_use gets the catalogue's own words for it", async () => {
    const emulator = createEmulator();
    const response = await emulator.handle(
      post(
        request([
          { role: 'user', content: 'read' },
          { role: 'assistant', content: [read] },
          { role: 'user', content: 'never mind' },
        ]),
      ),
    );
    assert.equal(response.status, 400);
    const body = (await response.json()) as any;
    assert.match(body.error.message, matchOf('tool-calls-unanswered'));
    assert.match(body.error.message, /^messages\.1: .*toolu_01A/);
  });

  test("the request's own shape: not JSON, no model, no max_tokens, no messages: one invalid_request_error each", async () => {
    const emulator = createEmulator();
    const cases: [unknown, RegExp][] = [
      ['{"messages": [', /not valid JSON/],
      [[1], /valid dictionary/],
      [{ max_tokens: 5, messages: hello }, /^model: Field required$/],
      [{ model: 'claude-sonnet-4-5', messages: hello }, /^max_tokens: Field required$/],
      [{ model: 'claude-sonnet-4-5', max_tokens: 5 }, /^messages: Field required$/],
      [{ model: 'claude-sonnet-4-5', max_tokens: 5, messages: {} }, /valid list/],
    ];
    for (const [body, pattern] of cases) {
      const response = await emulator.handle(post(body));
      assert.equal(response.status, 400);
      const answer = (await response.json()) as any;
      assert.equal(answer.type, 'error');
      assert.equal(answer.error.type, 'invalid_request_error');
      assert.match(answer.error.message, pattern);
    }
  });

  test('count_tokens is checked too and answers input_tokens without using up a step', async () => {
    const emulator = createEmulator({ script: [{ text: 'kept' }] });
    const counted = await emulator.handle(
      post({ model: 'claude-sonnet-4-5', messages: hello }, '/v1/messages/count_tokens?beta=true'),
    );
    assert.equal(counted.status, 200);
    assert.ok(((await counted.json()) as any).input_tokens > 0);
    const rejected = await emulator.handle(
      post({ model: 'claude-sonnet-4-5', messages: whitespaceBesideCall }, '/v1/messages/count_tokens'),
    );
    assert.equal(rejected.status, 400);
    assert.equal(((await (await emulator.handle(post(request(hello)))).json()) as any).content[0].text, 'kept');
  });

  test("with thinking on, a tool loop missing its thinking block is rejected, and the emulator's own answers carry one", async () => {
    const emulator = createEmulator({
      script: [{ toolCalls: [{ name: 'Read', arguments: '{"file_path":"/tmp/a.txt"}' }] }],
    });
    const thinking = { thinking: { type: 'enabled', budget_tokens: 1024 } };
    const rejected = await emulator.handle(
      post(
        request(
          [...whitespaceBesideCall.slice(0, 1), { role: 'assistant', content: [read] }, whitespaceBesideCall[2]],
          thinking,
        ),
      ),
    );
    assert.equal(rejected.status, 400);
    assert.match(((await rejected.json()) as any).error.message, matchOf('thinking-block-missing'));
    const answer = (await (await emulator.handle(post(request(hello, thinking)))).json()) as any;
    assert.deepEqual(
      answer.content.map((block: any) => block.type),
      ['thinking', 'tool_use'],
    );
    assert.ok(answer.content[0].signature.length > 0);
    const next = [
      ...hello,
      { role: 'assistant', content: answer.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: answer.content[1].id, content: 'a' }] },
    ];
    assert.equal(
      (await emulator.handle(post(request(next, thinking)))).status,
      200,
      'sending its answer back is valid',
    );
  });

  test('no key: 401 authentication_error; no anthropic-version: 400; an OAuth bearer token counts as a key', async () => {
    const emulator = createEmulator({ script: [{ text: 'kept' }] });
    const noKey = await emulator.handle(post(request(hello), '/v1/messages', { 'anthropic-version': '2023-06-01' }));
    assert.equal(noKey.status, 401);
    assert.deepEqual(await noKey.json(), {
      type: 'error',
      error: { type: 'authentication_error', message: 'x-api-key header is required' },
    });
    const noVersion = await emulator.handle(post(request(hello), '/v1/messages', { 'x-api-key': 'sk-ant-test' }));
    assert.equal(noVersion.status, 400);
    assert.equal(((await noVersion.json()) as any).error.message, 'anthropic-version: header is required');
    const bearer = await emulator.handle(
      post(request(hello), '/v1/messages', { authorization: 'Bearer oauth-token', 'anthropic-version': '2023-06-01' }),
    );
    assert.equal(((await bearer.json()) as any).content[0].text, 'kept', 'the refused requests used up no step');
    assert.deepEqual(
      emulator.requests.map((entry) => entry.status),
      [401, 400, 200],
    );
  });

  test('unknown paths get Anthropic-shaped 404s only when the chat wire is not served', async () => {
    const emulator = createEmulator({ wires: ['anthropic'] });
    const missing = await emulator.handle(post({}, '/v1/complete'));
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as any).error.type, 'not_found_error');
    assert.equal((await emulator.handle(post({ messages: hello }, '/v1/chat/completions'))).status, 404);
    assert.equal((await emulator.handle(new Request(`${URL_BASE}/v1/messages`))).status, 405);
  });
});

describe('emulator, Anthropic wire: answers and streaming', () => {
  test('parallel tool calls: one tool_use block each, toolu_ ids, stop_reason tool_use', async () => {
    const emulator = createEmulator({
      script: [
        {
          text: 'Reading both.',
          toolCalls: [
            { name: 'Read', arguments: '{"file_path":"a"}' },
            { name: 'Read', arguments: '{"file_path":"b"}' },
          ],
        },
      ],
    });
    const body = (await (await emulator.handle(post(request(hello)))).json()) as any;
    assert.equal(body.stop_reason, 'tool_use');
    assert.deepEqual(
      body.content.map((block: any) => block.type),
      ['text', 'tool_use', 'tool_use'],
    );
    assert.deepEqual(
      body.content.slice(1).map((block: any) => block.input),
      [{ file_path: 'a' }, { file_path: 'b' }],
    );
    assert.ok(body.content.slice(1).every((block: any) => /^toolu_[A-Za-z0-9_-]+$/.test(block.id)));
    assert.notEqual(body.content[1].id, body.content[2].id);
  });

  test("the stream is Anthropic's event sequence, named events, and rebuilds the same message", async () => {
    const step = {
      reasoning: 'think first',
      text: 'Reading both.',
      toolCalls: [
        { name: 'Read', arguments: '{"file_path":"a"}' },
        { name: 'Read', arguments: '{"file_path":"b"}' },
      ],
      stream: { chunkSize: 4 },
    };
    const emulator = createEmulator({ script: [step, step] });
    const whole = (await (await emulator.handle(post(request(hello)))).json()) as any;
    const response = await emulator.handle(post(request(hello, { stream: true })));
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const raw = await response.clone().text();
    for (const frame of raw.split('\n\n').filter((part) => part !== '')) {
      const [eventLine, dataLine] = frame.split('\n');
      assert.equal(
        eventLine?.replace(/^event: /, ''),
        JSON.parse(dataLine?.replace(/^data: /, '') ?? '{}').type,
        'each event is named after its type',
      );
    }
    const { events, error } = await readSse(response);
    assert.equal(error, undefined);
    const { message, types } = assemble(events);
    assert.equal(types[0], 'message_start');
    assert.equal(types[1], 'content_block_start');
    assert.equal(types[2], 'ping');
    assert.deepEqual(types.slice(-2), ['message_delta', 'message_stop']);
    assert.equal(types.filter((type) => type === 'content_block_start').length, 4);
    assert.equal(types.filter((type) => type === 'content_block_stop').length, 4);
    assert.equal(message.stop_reason, 'tool_use');
    const strip = (content: any[]) =>
      content.map((block) => ({ ...block, id: block.id === undefined ? undefined : 'id', signature: undefined }));
    assert.deepEqual(strip(message.content), strip(whole.content));
    assert.equal(message.content[0].thinking, 'think first');
  });

  test("faults: 429 with retry-after, 500 api_error, 529 overloaded_error, each in Anthropic's error body", async () => {
    const emulator = createEmulator({
      script: [
        { fault: { status: 429, retryAfter: 3 } },
        { fault: { status: 500 } },
        { fault: { status: 529 } },
        { text: 'recovered' },
      ],
    });
    const answers = [];
    for (let index = 0; index < 3; index += 1) {
      const response = await emulator.handle(post(request(hello)));
      answers.push([response.status, response.headers.get('retry-after'), ((await response.json()) as any).error.type]);
    }
    assert.deepEqual(answers, [
      [429, '3', 'rate_limit_error'],
      [500, null, 'api_error'],
      [529, null, 'overloaded_error'],
    ]);
    assert.equal(((await (await emulator.handle(post(request(hello)))).json()) as any).content[0].text, 'recovered');
  });

  test('a disconnect mid-stream cuts the events short, before message_stop', async () => {
    const emulator = createEmulator({
      script: [{ text: 'never finished', stream: { chunkSize: 2 }, fault: { disconnectAfterChunks: 4 } }],
    });
    const { events, error } = await readSse(await emulator.handle(post(request(hello, { stream: true }))));
    assert.equal(events.length, 4);
    assert.ok(error instanceof Error);
    assert.ok(!events.some((data) => JSON.parse(data).type === 'message_stop'));
  });

  test("overloaded mid-stream: Anthropic's error event after the given events, then the stream ends; non-streaming a 529", async () => {
    const emulator = createEmulator({
      script: [
        { text: 'cut off by load', stream: { chunkSize: 2 }, fault: { overloadedAfterChunks: 3 } },
        { fault: { overloadedAfterChunks: 0 } },
      ],
    });
    const response = await emulator.handle(post(request(hello, { stream: true })));
    const raw = await response.clone().text();
    assert.match(
      raw,
      /event: error\ndata: \{"type":"error","error":\{"type":"overloaded_error","message":"Overloaded"\}\}\n\n$/,
    );
    const { events, error } = await readSse(response);
    assert.equal(error, undefined, 'the stream ends cleanly');
    assert.deepEqual(
      events.map((data) => JSON.parse(data).type),
      ['message_start', 'content_block_start', 'ping', 'error'],
    );
    const plain = await emulator.handle(post(request(hello)));
    assert.equal(plain.status, 529);
    assert.equal(((await plain.json()) as any).error.type, 'overloaded_error');
  });

  test('a stall holds the answer back; a script whose tool arguments are not a JSON object gets a 500 naming it', async () => {
    const emulator = createEmulator({
      script: [{ fault: { stall: 40 }, text: 'late' }, { toolCalls: [{ name: 'Read', arguments: 'not json' }] }],
    });
    const started = performance.now();
    assert.equal(((await (await emulator.handle(post(request(hello)))).json()) as any).content[0].text, 'late');
    assert.ok(performance.now() - started >= 35);
    const broken = await emulator.handle(post(request(hello)));
    assert.equal(broken.status, 500);
    assert.match(((await broken.json()) as any).error.message, /toolCalls\[0\]\.arguments must be a JSON object/);
  });
});
