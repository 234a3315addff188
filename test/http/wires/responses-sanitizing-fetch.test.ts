import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import type { RepairEvent } from '../../../src/http/index.js';
import { createSanitizingFetch } from '../../../src/http/index.js';
import { useListeningEmulator } from '../../support/listening-emulator.js';

/**
 * The sanitizing fetch on the Responses wire, under the real `openai` SDK's `responses.create`
 * (and its stream), against the strict emulator over a socket: each poisoned history is sent as
 * the SDK builds it; a pass means the emulator (the core's Responses rules) saw only valid
 * requests. The first test is the control: without the fetch, the same history gets the 400.
 */

const served = useListeningEmulator({ wires: ['responses'] });
const { emulator } = served;

const MODEL = 'gpt-5-codex';
const HEADERS = { 'content-type': 'application/json', authorization: 'Bearer sk-test' };
const user: ResponseInputItem = { role: 'user', content: 'list the files' };
const call: ResponseInputItem = {
  type: 'function_call',
  id: 'fc_1',
  call_id: 'call_1',
  name: 'exec_command',
  arguments: '{"cmd":"ls"}',
};
const output: ResponseInputItem = { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' };
const poisoned: [string, ResponseInputItem[], string][] = [
  ['a call with no output (Codex interrupted mid-tool)', [user, call, user], 'tool-calls-unanswered'],
  ['an output whose call is gone (trimmed history)', [user, output, user], 'tool-result-orphan'],
  [
    'the same function_call recorded twice (Codex does not mend it)',
    [user, call, output, call, output],
    'tool-call-id-duplicate',
  ],
  [
    'a reasoning item left without its following item',
    [user, { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA' }, user],
    'reasoning-item-orphan',
  ],
];

function client(fetch?: typeof globalThis.fetch): OpenAI {
  return new OpenAI({
    apiKey: 'sk-test',
    baseURL: `${served.url}/v1`,
    maxRetries: 0,
    ...(fetch === undefined ? {} : { fetch }),
  });
}

function sanitizing(events: RepairEvent[] = [], send?: typeof fetch): typeof fetch {
  return createSanitizingFetch({
    onRepair: (event) => events.push(event),
    ...(send === undefined ? {} : { fetch: send }),
  });
}

function lastRequestWasValid(): void {
  const last = emulator.requests.at(-1);
  assert.ok(last !== undefined);
  assert.equal(last.wire, 'responses');
  assert.equal(last.status, 200, JSON.stringify(last.violations));
}

describe('createSanitizingFetch on the Responses wire', () => {
  test('control: without it, the real SDK sends each poisoned history and gets the 400', async () => {
    for (const [what, input, rule] of poisoned) {
      await assert.rejects(
        client().responses.create({ model: MODEL, input }),
        (error: unknown) => error instanceof OpenAI.BadRequestError && error.status === 400,
        what,
      );
      assert.equal(emulator.requests.at(-1)?.violations[0]?.rule, rule, what);
    }
  });

  test('openai responses.create: each poisoned history is repaired on the way out, the answer comes back', async () => {
    for (const [what, input, rule] of poisoned) {
      const events: RepairEvent[] = [];
      emulator.push({ text: 'repaired and answered' });
      const response = await client(sanitizing(events)).responses.create({ model: MODEL, input });
      assert.equal(response.output_text, 'repaired and answered', what);
      lastRequestWasValid();
      assert.equal(events.length, 1, what);
      assert.equal(events[0]?.wire, 'responses');
      assert.equal(events[0]?.attempt, 'request');
      assert.ok(events[0]?.rules.includes(rule as never), `${what}: ${rule} in ${events[0]?.rules.join(', ')}`);
      assert.match(events[0]?.url ?? '', /\/v1\/responses$/);
    }
  });

  test('openai responses.create({stream: true}) and responses.stream through it: repaired, the events relayed as they came', async () => {
    emulator.push(
      { text: 'streamed after the repair', stream: { chunkSize: 3 } },
      { toolCalls: [{ name: 'exec_command', arguments: '{"cmd":"cat a.txt"}' }], stream: { chunkSize: 4 } },
    );
    const stream = await client(sanitizing()).responses.create({
      model: MODEL,
      input: [user, call, user],
      stream: true,
    });
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    assert.equal(text, 'streamed after the repair');
    assert.equal(types[0], 'response.created');
    assert.equal(types.at(-1), 'response.completed');
    lastRequestWasValid();

    const helper = client(sanitizing()).responses.stream({ model: MODEL, input: [user, output] });
    let args = '';
    for await (const event of helper) if (event.type === 'response.function_call_arguments.delta') args += event.delta;
    const final = await helper.finalResponse();
    assert.equal(args, '{"cmd":"cat a.txt"}');
    assert.equal(final.output[0]?.type, 'function_call');
    lastRequestWasValid();
  });

  test("@ai-sdk/openai's Responses provider with it as its fetch: a history with an unanswered call is answered, streamed or not", async () => {
    const provider = createOpenAI({ apiKey: 'sk-test', baseURL: `${served.url}/v1`, fetch: sanitizing() });
    const messages = [
      { role: 'user' as const, content: 'list the files' },
      {
        role: 'assistant' as const,
        content: [{ type: 'tool-call' as const, toolCallId: 'call_1', toolName: 'exec_command', input: { cmd: 'ls' } }],
      },
      { role: 'user' as const, content: 'never mind, say hi' },
    ];
    // The control: the provider sends the unanswered call as it is.
    const unsanitized = createOpenAI({ apiKey: 'sk-test', baseURL: `${served.url}/v1` });
    await assert.rejects(generateText({ model: unsanitized.responses(MODEL), maxRetries: 0, messages }));
    assert.equal(emulator.requests.at(-1)?.violations[0]?.rule, 'tool-calls-unanswered');
    emulator.push(
      { text: 'hi from the AI SDK path' },
      { text: 'streamed from the AI SDK path', stream: { chunkSize: 5 } },
    );
    const response = await generateText({ model: provider.responses(MODEL), maxRetries: 0, messages });
    assert.equal(response.text, 'hi from the AI SDK path');
    lastRequestWasValid();
    const streamed = streamText({ model: provider.responses(MODEL), maxRetries: 0, messages });
    let text = '';
    for await (const delta of streamed.textStream) text += delta;
    assert.equal(text, 'streamed from the AI SDK path');
    lastRequestWasValid();
  });

  test('a valid request goes out byte for byte; compact is the wire too', async () => {
    const sent: { url: string; body: unknown }[] = [];
    const recording: typeof fetch = async (input, init) => {
      sent.push({ url: String(input instanceof Request ? input.url : input), body: init?.body });
      return emulator.fetch(input, init);
    };
    const valid = JSON.stringify({ model: MODEL, input: [user, call, output] });
    const events: RepairEvent[] = [];
    const response = await sanitizing(events, recording)(`${served.url}/v1/responses`, {
      method: 'POST',
      headers: HEADERS,
      body: valid,
    });
    assert.equal(response.status, 200);
    assert.equal(sent[0]?.body, valid, 'the very same string');
    assert.equal(events.length, 0, 'nothing repaired');
    const compacted = await sanitizing(events, recording)(`${served.url}/v1/responses/compact`, {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({ model: MODEL, input: [user, call, user] }),
    });
    assert.equal(compacted.status, 200);
    assert.equal(events[0]?.wire, 'responses');
    assert.match(events[0]?.url ?? '', /\/responses\/compact$/);
  });

  test('a body with previous_response_id, or string input, goes out untouched (only the provider sees the stored items)', async () => {
    const sent: unknown[] = [];
    const recording: typeof fetch = async (input, init) => {
      sent.push(init?.body);
      return emulator.fetch(input, init);
    };
    emulator.push({ toolCalls: [{ id: 'call_P', name: 'exec_command', arguments: '{"cmd":"ls"}' }] }, { text: 'done' });
    const events: RepairEvent[] = [];
    const first = await client(sanitizing(events, recording)).responses.create({
      model: MODEL,
      input: 'list the files',
    });
    const next = await client(sanitizing(events, recording)).responses.create({
      model: MODEL,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'call_P', output: 'a.txt' }],
    });
    assert.equal(next.output_text, 'done', 'the output answers the stored call: not an orphan');
    assert.equal(events.length, 0);
    assert.equal(sent.length, 2);
  });

  test('a 400 the repair cannot change is not retried, and the key is in no event, record or error', async () => {
    const key = 'sk-proj-never-logged-0123456789';
    const sent: unknown[] = [];
    const recording: typeof fetch = async (input, init) => {
      sent.push(init?.body);
      return emulator.fetch(input, init);
    };
    const events: RepairEvent[] = [];
    const keyed = new OpenAI({
      apiKey: key,
      baseURL: `${served.url}/v1`,
      maxRetries: 0,
      fetch: sanitizing(events, recording),
    });
    emulator.push({ text: 'fine' });
    await keyed.responses.create({ model: MODEL, input: [user, output] });
    const failed = await keyed.responses
      .create({ model: MODEL, input: [user], previous_response_id: 'resp_unknown' })
      .catch((error: unknown) => error);
    assert.ok(failed instanceof OpenAI.BadRequestError);
    assert.equal(sent.length, 2, 'one request each, no retry');
    const seen = JSON.stringify([events, emulator.requests.slice(-2), failed.error, failed.message]);
    assert.ok(!seen.includes(key) && !seen.includes('never-logged'));
  });
});
