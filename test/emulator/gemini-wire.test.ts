import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { ApiError, GoogleGenAI } from '@google/genai';
import { createEmulator } from '../../src/emulator/index.js';
import { useListeningEmulator } from '../support/listening-emulator.js';
import { readSse } from './read-sse.js';

const URL_BASE = 'http://emulator.test';
const catalogue = (
  JSON.parse(readFileSync(new URL('../fixtures/shared/rules.json', import.meta.url), 'utf8')) as {
    provider: string;
    id: string;
    match: string;
    example: unknown[];
  }[]
).filter((entry) => entry.provider === 'gemini');

const HEADERS = { 'content-type': 'application/json', 'x-goog-api-key': 'test-key' };
const GENERATE = '/v1beta/models/gemini-2.5-pro:generateContent';
const STREAM = '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse';

function post(body: unknown, path = GENERATE, headers: Record<string, string> = HEADERS): Request {
  return new Request(`${URL_BASE}${path}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const user = { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] };
const call = (city: string) => ({ functionCall: { name: 'get_weather', args: { city } } });
const answer = { functionResponse: { name: 'get_weather', response: { temp_c: 18 } } };

describe('emulator, Gemini wire: requests checked by the core', () => {
  test('a valid request gets a GenerateContentResponse; the model comes from the path', async () => {
    const emulator = createEmulator({ script: [{ text: 'hi there' }] });
    const response = await emulator.handle(post({ contents: [user] }));
    assert.equal(response.status, 200);
    const body = (await response.json()) as any;
    assert.deepEqual(body.candidates[0].content, { parts: [{ text: 'hi there' }], role: 'model' });
    assert.equal(body.candidates[0].finishReason, 'STOP');
    assert.equal(body.modelVersion, 'gemini-2.5-pro');
    assert.equal(
      body.usageMetadata.totalTokenCount,
      body.usageMetadata.promptTokenCount + body.usageMetadata.candidatesTokenCount,
    );
    assert.equal(emulator.requests[0]?.wire, 'gemini');
  });

  test('parallel calls are functionCall parts of one model turn; with reasoning a thought part and a thoughtSignature', async () => {
    const emulator = createEmulator({
      script: [
        {
          reasoning: 'Both cities.',
          toolCalls: [
            { name: 'get_weather', arguments: '{"city":"Paris"}' },
            { name: 'get_weather', arguments: '{"city":"Rome"}' },
          ],
        },
      ],
    });
    const body = (await (await emulator.handle(post({ contents: [user] }))).json()) as any;
    const parts = body.candidates[0].content.parts;
    assert.deepEqual(parts[0], { text: 'Both cities.', thought: true });
    assert.deepEqual(
      parts.slice(1).map((part: any) => part.functionCall),
      [
        { name: 'get_weather', args: { city: 'Paris' } },
        { name: 'get_weather', args: { city: 'Rome' } },
      ],
    );
    assert.equal(typeof parts[1].thoughtSignature, 'string');
    assert.equal(parts[2].thoughtSignature, undefined, 'only the first call is signed');
  });

  test('every catalogue entry the core decides gets the 400 INVALID_ARGUMENT, worded so the catalogue recognises it', async () => {
    const emulator = createEmulator();
    const rejected: string[] = [];
    for (const entry of catalogue) {
      const response = await emulator.handle(post({ contents: entry.example }));
      if (response.status === 200) continue;
      const body = (await response.json()) as any;
      assert.equal(response.status, 400, entry.id);
      assert.deepEqual(Object.keys(body), ['error']);
      assert.deepEqual(Object.keys(body.error), ['code', 'message', 'status'], entry.id);
      assert.equal(body.error.code, 400);
      assert.equal(body.error.status, 'INVALID_ARGUMENT');
      assert.match(body.error.message, new RegExp(entry.match), entry.id);
      rejected.push(entry.id);
    }
    for (const id of [
      'tool-call-turn-position',
      'tool-result-orphan',
      'tool-calls-unanswered',
      'tool-results-excess',
      'content-empty',
      'text-block-empty',
      'empty-messages',
      'role-unknown',
    ])
      assert.ok(rejected.includes(id), `${id} is rejected`);
    assert.ok(emulator.requests.every((request) => request.status !== 200 || request.violations.length === 0));
  });

  test('the key: x-goog-api-key, ?key= or a bearer token; none is a 403 PERMISSION_DENIED', async () => {
    const emulator = createEmulator();
    const body = { contents: [user] };
    const none = await emulator.handle(post(body, GENERATE, { 'content-type': 'application/json' }));
    assert.equal(none.status, 403);
    assert.equal(((await none.json()) as any).error.status, 'PERMISSION_DENIED');
    assert.equal((await emulator.handle(post(body, `${GENERATE}?key=abc`, {}))).status, 200);
    assert.equal((await emulator.handle(post(body, GENERATE, { authorization: 'Bearer ya29.x' }))).status, 200);
  });

  test('the request shape: not JSON, contents not a list', async () => {
    const emulator = createEmulator();
    const notJson = await emulator.handle(post('{"contents":'));
    assert.equal(notJson.status, 400);
    assert.match(((await notJson.json()) as any).error.message, /^Invalid JSON payload received/);
    const notList = await emulator.handle(post({ contents: { role: 'user' } }));
    assert.equal(((await notList.json()) as any).error.status, 'INVALID_ARGUMENT');
  });

  test('streamGenerateContent?alt=sse: one GenerateContentResponse per event, the last with finishReason and usage', async () => {
    const emulator = createEmulator({
      script: [
        { text: 'a streamed answer', toolCalls: [{ name: 'ls', arguments: '{"dir":"."}' }], stream: { chunkSize: 4 } },
      ],
    });
    const response = await emulator.handle(post({ contents: [user] }, STREAM));
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const chunks = (await readSse(response)).events.map((data) => JSON.parse(data));
    assert.ok(chunks.length > 2);
    const parts = chunks.flatMap((chunk) => chunk.candidates[0].content.parts);
    assert.equal(
      parts
        .filter((part) => typeof part.text === 'string')
        .map((part) => part.text)
        .join(''),
      'a streamed answer',
    );
    assert.deepEqual(parts.at(-1), { functionCall: { name: 'ls', args: { dir: '.' } } });
    assert.ok(chunks.slice(0, -1).every((chunk) => chunk.candidates[0].finishReason === undefined));
    assert.equal(chunks.at(-1).candidates[0].finishReason, 'STOP');
    assert.ok(chunks.at(-1).usageMetadata.candidatesTokenCount > 0);
  });

  test('streamGenerateContent without alt=sse is one JSON array of responses', async () => {
    const emulator = createEmulator({ script: [{ text: 'array answer', stream: { chunkSize: 5 } }] });
    const response = await emulator.handle(
      post({ contents: [user] }, '/v1beta/models/gemini-2.5-flash:streamGenerateContent'),
    );
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    const chunks = JSON.parse(await response.text()) as any[];
    assert.equal(chunks.map((chunk) => chunk.candidates[0].content.parts[0].text).join(''), 'array answer');
  });

  test('countTokens is checked (contents or generateContentRequest) and uses up no step', async () => {
    const emulator = createEmulator({ script: [{ text: 'the step' }] });
    const count = '/v1beta/models/gemini-2.5-pro:countTokens';
    const ok = await emulator.handle(post({ contents: [user] }, count));
    assert.ok(((await ok.json()) as any).totalTokens > 0);
    const bad = await emulator.handle(
      post(
        {
          generateContentRequest: {
            model: 'models/gemini-2.5-pro',
            contents: [user, { role: 'model', parts: [call('Paris')] }, { role: 'user', parts: [answer, answer] }],
          },
        },
        count,
      ),
    );
    assert.equal(bad.status, 400);
    const next = (await (await emulator.handle(post({ contents: [user] }))).json()) as any;
    assert.equal(next.candidates[0].content.parts[0].text, 'the step');
  });

  test('faults: 429 with a RetryInfo detail and retry-after, 503 UNAVAILABLE, overloaded mid-stream, a dropped stream', async () => {
    const emulator = createEmulator({
      script: [
        { fault: { status: 429, retryAfter: 7 } },
        { fault: { status: 503 } },
        { text: 'a longer answer that streams', stream: { chunkSize: 3 }, fault: { overloadedAfterChunks: 2 } },
        { text: 'a longer answer that streams', stream: { chunkSize: 3 }, fault: { disconnectAfterChunks: 2 } },
      ],
    });
    const limited = await emulator.handle(post({ contents: [user] }));
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '7');
    const error = ((await limited.json()) as any).error;
    assert.equal(error.status, 'RESOURCE_EXHAUSTED');
    assert.equal(error.details[0].retryDelay, '7s');
    const unavailable = await emulator.handle(post({ contents: [user] }));
    assert.equal(((await unavailable.json()) as any).error.status, 'UNAVAILABLE');
    const overloaded = await readSse(await emulator.handle(post({ contents: [user] }, STREAM)));
    assert.equal(overloaded.events.length, 3);
    assert.equal(JSON.parse(overloaded.events[2] ?? '{}').error.status, 'UNAVAILABLE');
    const dropped = await readSse(await emulator.handle(post({ contents: [user] }, STREAM)));
    assert.equal(dropped.events.length, 2);
    assert.ok(dropped.error !== undefined);
  });
});

describe('emulator, Gemini wire: the real @google/genai against it on loopback', () => {
  const served = useListeningEmulator();
  const client = () => new GoogleGenAI({ apiKey: 'test-key', httpOptions: { baseUrl: served.url } });

  test('generateContent and generateContentStream, text and a function call', async () => {
    served.emulator.push(
      { text: 'hello from the emulator' },
      { text: 'streaming', toolCalls: [{ name: 'ls', arguments: '{"dir":"."}' }], stream: { chunkSize: 3 } },
    );
    const reply = await client().models.generateContent({ model: 'gemini-2.5-pro', contents: 'hi' });
    assert.equal(reply.text, 'hello from the emulator');
    let text = '';
    const calls: unknown[] = [];
    for await (const chunk of await client().models.generateContentStream({
      model: 'gemini-2.5-pro',
      contents: 'hi',
    })) {
      text += chunk.text ?? '';
      calls.push(...(chunk.functionCalls ?? []));
    }
    assert.equal(text, 'streaming');
    assert.deepEqual(calls, [{ name: 'ls', args: { dir: '.' } }]);
  });

  test('a violation reaches the SDK as an ApiError 400 with the catalogue text', async () => {
    await assert.rejects(
      client().models.generateContent({
        model: 'gemini-2.5-pro',
        contents: [user, { role: 'model', parts: [call('Paris'), call('Rome')] }, { role: 'user', parts: [answer] }],
      }),
      (error: unknown) =>
        error instanceof ApiError &&
        error.status === 400 &&
        /number of function response parts is equal to the number of function call parts/.test(error.message),
    );
  });
});
