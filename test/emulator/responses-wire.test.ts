import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import OpenAI from 'openai';
import { createEmulator } from '../../src/emulator/index.js';
import { readSse } from './read-sse.js';

const URL_BASE = 'http://emulator.test';
const catalogue = (
  JSON.parse(readFileSync(new URL('../fixtures/shared/rules.json', import.meta.url), 'utf8')) as {
    provider: string;
    id: string;
    match: string;
    example: unknown[];
  }[]
).filter((entry) => entry.provider === 'openai-responses');

const HEADERS = { 'content-type': 'application/json', authorization: 'Bearer sk-test' };

function post(body: unknown, path = '/v1/responses', headers: Record<string, string> = HEADERS): Request {
  return new Request(`${URL_BASE}${path}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const weather = (city: string, id: string) => ({
  type: 'function_call',
  call_id: id,
  name: 'get_weather',
  arguments: JSON.stringify({ city }),
});
const output = (id: string) => ({ type: 'function_call_output', call_id: id, output: '{"temp_c":18}' });
const user = { role: 'user', content: 'Weather in Paris?' };

/** Rebuilds the response from the events, checking what the SDKs rely on: numbered events, items opened before their deltas. */
function assemble(events: string[]): { response: any; types: string[] } {
  const types: string[] = [];
  let response: any;
  events.forEach((data, index) => {
    const event = JSON.parse(data);
    types.push(event.type);
    assert.equal(event.sequence_number, index, 'events are numbered in order');
    if (event.type === 'response.created') response = { ...event.response, output: [] };
    else if (event.type === 'response.output_item.added') {
      assert.equal(event.output_index, response.output.length, 'items open in order');
      response.output.push({ ...event.item });
    } else if (event.type === 'response.output_text.delta') {
      const item = response.output[event.output_index];
      item.text = (item.text ?? '') + event.delta;
    } else if (event.type === 'response.function_call_arguments.delta') {
      response.output[event.output_index].arguments += event.delta;
    } else if (event.type === 'response.output_item.done') {
      const item = response.output[event.output_index];
      if (item.type === 'message') assert.equal(item.text, event.item.content[0].text, 'the deltas add up to the text');
      if (item.type === 'function_call') assert.equal(item.arguments, event.item.arguments, 'the deltas add up');
      response.output[event.output_index] = event.item;
    } else if (event.type === 'response.completed') {
      assert.deepEqual(event.response.output, response.output, 'response.completed carries the items streamed');
      response = event.response;
    }
  });
  return { response, types };
}

describe('emulator, Responses wire: requests checked by the core', () => {
  test('a valid request gets a response object with a message item; the real openai SDK reads it', async () => {
    const emulator = createEmulator({ script: [{ text: 'hi there' }] });
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${URL_BASE}/v1`, fetch: emulator.fetch, maxRetries: 0 });
    const response = await client.responses.create({ model: 'gpt-5', input: 'hello' });
    assert.equal(response.object, 'response');
    assert.equal(response.status, 'completed');
    assert.equal(response.output_text, 'hi there');
    assert.match(response.id, /^resp_/);
    assert.equal(
      response.usage?.total_tokens,
      (response.usage?.input_tokens ?? 0) + (response.usage?.output_tokens ?? 0),
    );
    assert.deepEqual(
      emulator.requests.map((request) => [request.wire, request.path, request.status]),
      [['responses', '/v1/responses', 200]],
    );
  });

  test('parallel tool calls are consecutive function_call items with fc_ ids and distinct call_ids', async () => {
    const emulator = createEmulator({
      script: [
        {
          toolCalls: [
            { name: 'get_weather', arguments: '{"city":"Paris"}' },
            { name: 'get_weather', arguments: '{"city":"Rome"}' },
          ],
        },
      ],
    });
    const response = await emulator.handle(post({ model: 'gpt-5', input: [user] }));
    const body = (await response.json()) as any;
    assert.deepEqual(
      body.output.map((item: any) => [item.type, item.name, JSON.parse(item.arguments).city]),
      [
        ['function_call', 'get_weather', 'Paris'],
        ['function_call', 'get_weather', 'Rome'],
      ],
    );
    assert.ok(body.output.every((item: any) => /^fc_/.test(item.id) && /^call_/.test(item.call_id)));
    assert.notEqual(body.output[0].call_id, body.output[1].call_id);
  });

  test('every catalogue entry the core decides gets the 400 in the API shape, worded so the catalogue recognises it, using up no step', async () => {
    const emulator = createEmulator({ script: [{ text: 'after' }] });
    const rejected: string[] = [];
    for (const entry of catalogue) {
      const response = await emulator.handle(post({ model: 'gpt-5', input: entry.example }));
      if (response.status === 200) continue;
      const body = (await response.json()) as any;
      assert.equal(response.status, 400, entry.id);
      assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type'], entry.id);
      assert.equal(body.error.type, 'invalid_request_error');
      assert.equal(body.error.param, 'input');
      assert.equal(body.error.code, null);
      assert.match(body.error.message, new RegExp(entry.match), entry.id);
      rejected.push(entry.id);
    }
    for (const id of ['tool-calls-unanswered', 'tool-result-orphan', 'reasoning-item-orphan', 'tool-call-id-duplicate'])
      assert.ok(rejected.includes(id), `${id} is rejected`);
    // The 400s used up no step: the first 200 was answered with the script's first step.
    const first = emulator.requests.findIndex((request) => request.status === 200);
    assert.ok(first === -1 || emulator.requests.slice(0, first).every((request) => request.status === 400));
  });

  test('the other call kinds: custom, local shell and tool search calls paired by call_id, answered 400 the way the API answers', async () => {
    const emulator = createEmulator({ script: [{ text: 'after' }, { text: 'again' }] });
    const custom = { type: 'custom_tool_call', call_id: 'call_c', name: 'apply_patch', input: '*** Begin Patch' };
    const shell = {
      type: 'local_shell_call',
      call_id: 'call_s',
      status: 'completed',
      action: { type: 'exec', command: ['ls'], env: {} },
    };
    const unanswered = await emulator.handle(post({ model: 'gpt-5', input: [user, custom, user] }));
    assert.equal(unanswered.status, 400);
    assert.deepEqual(((await unanswered.json()) as any).error, {
      message: 'No tool output found for custom tool call call_c.',
      type: 'invalid_request_error',
      param: 'input',
      code: null,
    });
    const orphan = await emulator.handle(
      post({ model: 'gpt-5', input: [user, { type: 'custom_tool_call_output', call_id: 'call_s', output: 'x' }] }),
    );
    assert.equal(orphan.status, 400);
    assert.match(
      ((await orphan.json()) as any).error.message,
      /No tool call found for function call output with call_id call_s/,
    );
    const answered = [
      user,
      custom,
      shell,
      { type: 'custom_tool_call_output', call_id: 'call_c', output: 'Done!' },
      { type: 'function_call_output', call_id: 'call_s', output: 'a.ts' },
      { type: 'mcp_call', id: 'mcp_1', server_label: 'docs', name: 'lookup', arguments: '{}', output: 'found' },
    ];
    assert.equal((await emulator.handle(post({ model: 'gpt-5', input: answered }))).status, 200);
  });

  test('the openai SDK sees the 400 as an APIError with the catalogue text', async () => {
    const emulator = createEmulator();
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${URL_BASE}/v1`, fetch: emulator.fetch, maxRetries: 0 });
    await assert.rejects(
      client.responses.create({ model: 'gpt-5', input: [user, weather('Paris', 'call_1'), user] as any }),
      (error: any) =>
        error.status === 400 &&
        error.error?.message === 'No tool output found for function call call_1.' &&
        error.error?.param === 'input',
    );
  });

  test('the request shape: not JSON, no model, input neither string nor list, no key', async () => {
    const emulator = createEmulator();
    const notJson = await emulator.handle(post('{"model":'));
    assert.equal(notJson.status, 400);
    assert.match(((await notJson.json()) as any).error.message, /could not parse the JSON body/);
    const noModel = await emulator.handle(post({ input: 'hi' }));
    assert.equal(((await noModel.json()) as any).error.param, 'model');
    const badInput = await emulator.handle(post({ model: 'gpt-5', input: 7 }));
    assert.equal(badInput.status, 400);
    assert.equal(((await badInput.json()) as any).error.param, 'input');
    const noKey = await emulator.handle(post({ model: 'gpt-5', input: 'hi' }, '/v1/responses', {}));
    assert.equal(noKey.status, 401);
    assert.match(((await noKey.json()) as any).error.message, /didn't provide an API key/);
  });

  test('streaming: the real event sequence, text and arguments in deltas that add up, then response.completed', async () => {
    const emulator = createEmulator({
      script: [
        {
          reasoning: 'Look it up.',
          text: 'Checking both cities.',
          toolCalls: [
            { name: 'get_weather', arguments: '{"city":"Paris"}' },
            { name: 'get_weather', arguments: '{"city":"Rome"}' },
          ],
          stream: { chunkSize: 5 },
        },
      ],
    });
    const response = await emulator.handle(
      post({ model: 'gpt-5', input: [user], stream: true, include: ['reasoning.encrypted_content'], store: false }),
    );
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const { events } = await readSse(response);
    const { response: final, types } = assemble(events);
    assert.deepEqual(types.slice(0, 3), ['response.created', 'response.in_progress', 'response.output_item.added']);
    assert.equal(types.at(-1), 'response.completed');
    assert.ok(types.filter((type) => type === 'response.output_text.delta').length > 1, 'text in several deltas');
    assert.ok(types.includes('response.function_call_arguments.delta'));
    assert.ok(types.includes('response.reasoning_summary_text.delta'));
    assert.deepEqual(
      final.output.map((item: any) => item.type),
      ['reasoning', 'message', 'function_call', 'function_call'],
    );
    assert.equal(typeof final.output[0].encrypted_content, 'string', 'include asked for encrypted reasoning');
    assert.equal(final.usage.total_tokens, final.usage.input_tokens + final.usage.output_tokens);
  });

  test('the openai SDK streams it (responses.stream) and gets the final response', async () => {
    const emulator = createEmulator({ script: [{ text: 'streamed answer', stream: { chunkSize: 4 } }] });
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${URL_BASE}/v1`, fetch: emulator.fetch, maxRetries: 0 });
    const stream = client.responses.stream({ model: 'gpt-5', input: 'hello' });
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    const final = await stream.finalResponse();
    assert.equal(text, 'streamed answer');
    assert.equal(final.status, 'completed');
  });

  test('a tool loop continued by previous_response_id is checked with the stored items; an unknown id is a 400', async () => {
    const emulator = createEmulator({
      script: [{ toolCalls: [{ id: 'call_A', name: 'get_weather', arguments: '{"city":"Paris"}' }] }, { text: 'done' }],
    });
    const first = (await (await emulator.handle(post({ model: 'gpt-5', input: [user] }))).json()) as any;
    const orphanHere = await emulator.handle(post({ model: 'gpt-5', input: [output('call_A')] }));
    assert.equal(orphanHere.status, 400, 'without the previous response the output is an orphan');
    const continued = await emulator.handle(
      post({ model: 'gpt-5', previous_response_id: first.id, input: [output('call_A')] }),
    );
    assert.equal(continued.status, 200);
    const unanswered = await emulator.handle(
      post({ model: 'gpt-5', previous_response_id: first.id, input: [{ role: 'user', content: 'never mind' }] }),
    );
    assert.equal(unanswered.status, 400);
    assert.equal(((await unanswered.json()) as any).error.message, 'No tool output found for function call call_A.');
    const unknown = await emulator.handle(post({ model: 'gpt-5', previous_response_id: 'resp_nope', input: 'hi' }));
    assert.equal(((await unknown.json()) as any).error.param, 'previous_response_id');
  });

  test('compact and input_tokens are checked, answered, and use up no step', async () => {
    const emulator = createEmulator({ script: [{ text: 'the step' }] });
    const input = [user, weather('Paris', 'call_1'), output('call_1')];
    const compact = await emulator.handle(post({ model: 'gpt-5', input }, '/v1/responses/compact'));
    assert.equal(compact.status, 200);
    const compacted = (await compact.json()) as any;
    assert.deepEqual(compacted.output[0], user);
    assert.equal(compacted.output.at(-1).type, 'compaction');
    const bad = await emulator.handle(
      post({ model: 'gpt-5', input: [user, weather('Paris', 'call_1')] }, '/v1/responses/compact'),
    );
    assert.equal(bad.status, 400);
    const count = await emulator.handle(post({ model: 'gpt-5', input }, '/v1/responses/input_tokens'));
    assert.ok(((await count.json()) as any).input_tokens > 0);
    // The compaction item goes back as input (opaque) and the step is still the first.
    const next = await emulator.handle(post({ model: 'gpt-5', input: [...compacted.output, user] }));
    const body = (await next.json()) as any;
    assert.equal(body.output[0].content[0].text, 'the step');
  });

  test('faults: 429 with retry-after in the API body, 500, overloaded mid-stream as an error event, a dropped stream', async () => {
    const emulator = createEmulator({
      script: [
        { fault: { status: 429, retryAfter: 3 } },
        { fault: { status: 500 } },
        { text: 'a longer answer that streams', stream: { chunkSize: 3 }, fault: { overloadedAfterChunks: 4 } },
        { text: 'a longer answer that streams', stream: { chunkSize: 3 }, fault: { disconnectAfterChunks: 4 } },
      ],
    });
    const limited = await emulator.handle(post({ model: 'gpt-5', input: 'hi' }));
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '3');
    assert.equal(((await limited.json()) as any).error.code, 'rate_limit_exceeded');
    const failed = await emulator.handle(post({ model: 'gpt-5', input: 'hi' }));
    assert.equal(failed.status, 500);
    assert.equal(((await failed.json()) as any).error.type, 'server_error');
    const overloaded = await readSse(await emulator.handle(post({ model: 'gpt-5', input: 'hi', stream: true })));
    assert.equal(overloaded.events.length, 5);
    assert.deepEqual(JSON.parse(overloaded.events[4] ?? '{}').type, 'error');
    assert.equal(JSON.parse(overloaded.events[4] ?? '{}').code, 'server_is_overloaded');
    const dropped = await readSse(await emulator.handle(post({ model: 'gpt-5', input: 'hi', stream: true })));
    assert.equal(dropped.events.length, 4);
    assert.ok(dropped.error !== undefined, 'the stream breaks');
  });
});
