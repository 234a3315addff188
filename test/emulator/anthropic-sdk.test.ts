import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import Anthropic from '@anthropic-ai/sdk';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { useListeningEmulator } from '../support/listening-emulator.js';

/**
 * The real Anthropic clients against the emulator's Anthropic wire over a socket: the official
 * `@anthropic-ai/sdk` (create, stream, a tool loop, the 400 it raises for a poisoned history, its
 * retry on 529) and the AI SDK's `@ai-sdk/anthropic` (generateText with a tool loop, streamText).
 * Both parse and validate what the emulator sends, so a pass means the shapes are Anthropic's.
 */

const served = useListeningEmulator({ wires: ['anthropic'] });
const { emulator } = served;

const client = (options: { maxRetries?: number } = {}) =>
  new Anthropic({ apiKey: 'sk-ant-emulator', baseURL: served.url, maxRetries: options.maxRetries ?? 0 });
const MODEL = 'claude-sonnet-4-5';
const readTool: Anthropic.Tool = {
  name: 'Read',
  description: 'Read a file',
  input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
};

describe('@anthropic-ai/sdk against the emulator', () => {
  test('messages.create: text', async () => {
    emulator.push({ text: 'Hello from the emulator.' });
    const message = await client().messages.create({
      model: MODEL,
      max_tokens: 256,
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(message.type, 'message');
    assert.equal(message.stop_reason, 'end_turn');
    assert.deepEqual(message.content, [{ type: 'text', text: 'Hello from the emulator.' }]);
    assert.ok(message.usage.input_tokens > 0);
  });

  test('messages.stream: text deltas, parallel tool calls and finalMessage', async () => {
    emulator.push({
      text: 'Reading two files.',
      toolCalls: [
        { name: 'Read', arguments: '{"file_path":"/a.txt"}' },
        { name: 'Read', arguments: '{"file_path":"/b.txt"}' },
      ],
      stream: { chunkSize: 3 },
    });
    const stream = client().messages.stream({
      model: MODEL,
      max_tokens: 256,
      tools: [readTool],
      messages: [{ role: 'user', content: 'read both' }],
    });
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const events: string[] = [];
    stream.on('streamEvent', (event) => events.push(event.type));
    const message = await stream.finalMessage();
    assert.equal(text, 'Reading two files.');
    assert.equal(message.stop_reason, 'tool_use');
    const calls = message.content.filter((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');
    assert.deepEqual(
      calls.map((call) => call.input),
      [{ file_path: '/a.txt' }, { file_path: '/b.txt' }],
    );
    assert.equal(events[0], 'message_start');
    assert.equal(events.at(-1), 'message_stop');
  });

  test('a tool loop: tool_use, the results sent back, the final text; the emulator saw only valid requests', async () => {
    const before = emulator.requests.length;
    emulator.push(
      { toolCalls: [{ name: 'Read', arguments: '{"file_path":"/a.txt"}' }] },
      { text: 'The file says hello.' },
    );
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'what is in /a.txt?' }];
    const first = await client().messages.create({
      model: MODEL,
      max_tokens: 256,
      tools: [readTool],
      messages,
      stream: true,
    });
    const content: Anthropic.ContentBlock[] = [];
    let partial = '';
    for await (const event of first) {
      if (event.type === 'content_block_start') content.push(event.content_block);
      if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta')
        partial += event.delta.partial_json;
    }
    const call = content[0] as Anthropic.ToolUseBlock;
    assert.equal(call.type, 'tool_use');
    assert.deepEqual(JSON.parse(partial), { file_path: '/a.txt' });
    messages.push(
      { role: 'assistant', content: [{ ...call, input: JSON.parse(partial) }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'hello' }] },
    );
    const final = await client().messages.create({ model: MODEL, max_tokens: 256, tools: [readTool], messages });
    assert.deepEqual(final.content, [{ type: 'text', text: 'The file says hello.' }]);
    assert.deepEqual(
      emulator.requests.slice(before).map((request) => request.status),
      [200, 200],
    );
  });

  test("a poisoned history raises the SDK's BadRequestError with Anthropic's error type and text", async () => {
    const poisoned: Anthropic.MessageParam[] = [
      { role: 'user', content: 'read a.txt' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: ' ' },
          { type: 'tool_use', id: 'toolu_01A', name: 'Read', input: { file_path: '/a.txt' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A', content: 'hello' }] },
    ];
    await assert.rejects(
      client().messages.create({ model: MODEL, max_tokens: 256, messages: poisoned }),
      (error: unknown) => {
        assert.ok(error instanceof Anthropic.BadRequestError);
        assert.equal(error.status, 400);
        assert.equal((error.error as any).error.type, 'invalid_request_error');
        assert.match(error.message, /text content blocks must contain non-whitespace text/);
        return true;
      },
    );
  });

  test('529 overloaded_error, then 429 with retry-after: the SDK retries both and gets the answer', async () => {
    emulator.push({ fault: { status: 529 } }, { fault: { status: 429, retryAfter: 0 } }, { text: 'after the retries' });
    const before = emulator.requests.length;
    const message = await client({ maxRetries: 2 }).messages.create({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.deepEqual(message.content, [{ type: 'text', text: 'after the retries' }]);
    assert.deepEqual(
      emulator.requests.slice(before).map((request) => request.status),
      [529, 429, 200],
    );
  });

  test("an overloaded_error event mid-stream surfaces as the SDK's APIError", async () => {
    emulator.push({ text: 'never whole', stream: { chunkSize: 2 }, fault: { overloadedAfterChunks: 4 } });
    const stream = client().messages.stream({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    });
    await assert.rejects(stream.finalMessage(), (error: unknown) => {
      assert.ok(error instanceof Anthropic.APIError, String(error));
      assert.match(error.message, /overloaded_error|Overloaded/);
      return true;
    });
  });

  test('messages.countTokens', async () => {
    const counted = await client().messages.countTokens({
      model: MODEL,
      messages: [{ role: 'user', content: 'count me' }],
    });
    assert.ok(counted.input_tokens > 0);
  });
});

describe('@ai-sdk/anthropic against the emulator', () => {
  const provider = () => createAnthropic({ apiKey: 'sk-ant-emulator', baseURL: `${served.url}/v1` });
  const readFile = tool({
    description: 'Read a file',
    inputSchema: jsonSchema<{ file_path: string }>({
      type: 'object',
      properties: { file_path: { type: 'string' } },
      required: ['file_path'],
    }),
    execute: async ({ file_path }) => `contents of ${file_path}`,
  });

  test('generateText runs the tool loop to the final text', async () => {
    emulator.push(
      {
        toolCalls: [
          { name: 'Read', arguments: '{"file_path":"/a.txt"}' },
          { name: 'Read', arguments: '{"file_path":"/b.txt"}' },
        ],
      },
      { text: 'Both read.' },
    );
    const before = emulator.requests.length;
    const result = await generateText({
      model: provider()(MODEL),
      tools: { Read: readFile },
      stopWhen: stepCountIs(3),
      prompt: 'read both files',
      maxRetries: 0,
    });
    assert.equal(result.text, 'Both read.');
    assert.deepEqual(
      result.steps[0]?.toolResults.map((entry) => entry.output),
      ['contents of /a.txt', 'contents of /b.txt'],
    );
    assert.deepEqual(
      emulator.requests.slice(before).map((request) => request.status),
      [200, 200],
    );
  });

  test('streamText streams the text and the tool call', async () => {
    emulator.push(
      {
        text: 'Streaming ',
        toolCalls: [{ name: 'Read', arguments: '{"file_path":"/c.txt"}' }],
        stream: { chunkSize: 2 },
      },
      { text: 'done.', stream: { chunkSize: 2 } },
    );
    const result = streamText({
      model: provider()(MODEL),
      tools: { Read: readFile },
      stopWhen: stepCountIs(3),
      prompt: 'read c',
      maxRetries: 0,
    });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    assert.equal(text, 'Streaming done.');
    assert.equal((await result.steps)[0]?.toolCalls[0]?.toolName, 'Read');
  });
});
