import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import type { Content } from '@google/genai';
import { ApiError, GoogleGenAI } from '@google/genai';
import { generateText, streamText } from 'ai';
import type { RepairEvent } from '../../../src/http/index.js';
import { createSanitizingFetch } from '../../../src/http/index.js';
import { useListeningEmulator } from '../../support/listening-emulator.js';

/**
 * The sanitizing fetch on the Gemini wire, under the real `@google/genai` (generateContent and
 * generateContentStream), against the strict emulator over a socket. The SDK takes no `fetch`
 * option: it calls the global one, so the test puts the sanitizing fetch there (as an application
 * would) for the calls marked `through`, sending through the original. The first test is the
 * control: without it, the same history gets the 400.
 */

const served = useListeningEmulator({ wires: ['gemini'] });
const { emulator } = served;
const original = globalThis.fetch;
const events: RepairEvent[] = [];
let routed = false;
const sanitizing = createSanitizingFetch({ fetch: original, onRepair: (event) => events.push(event) });

before(() => {
  globalThis.fetch = ((input, init) => (routed ? sanitizing(input, init) : original(input, init))) as typeof fetch;
});
after(() => {
  globalThis.fetch = original;
});

async function through<T>(work: () => Promise<T>): Promise<T> {
  routed = true;
  try {
    return await work();
  } finally {
    routed = false;
  }
}

const MODEL = 'gemini-2.5-pro';
const KEY = 'AIza-never-logged-0123456789';
const client = () => new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: served.url } });
const user: Content = { role: 'user', parts: [{ text: 'Read a.txt and b.txt' }] };
const call = (file: string, signed = false): Content['parts'] & object => [
  { functionCall: { name: 'read_file', args: { file } }, ...(signed ? { thoughtSignature: 'c2lnbmVk' } : {}) },
];
const response = (file: string) => ({ functionResponse: { name: 'read_file', response: { output: `${file} text` } } });
const poisoned: [string, Content[], string][] = [
  [
    'two functionResponse parts for one functionCall (Gemini CLI resuming its own chat)',
    [
      user,
      { role: 'model', parts: call('a.txt', true) },
      { role: 'user', parts: [response('a.txt'), response('a.txt')] },
    ],
    'tool-results-excess',
  ],
  [
    'a call turn with no responses',
    [
      user,
      { role: 'model', parts: [...call('a.txt'), ...call('b.txt')] },
      { role: 'user', parts: [{ text: 'go on' }] },
    ],
    'tool-calls-unanswered',
  ],
  [
    'a response turn with no call turn before it',
    [user, { role: 'user', parts: [response('a.txt')] }],
    'tool-result-orphan',
  ],
  [
    'an empty text part in a model turn',
    [user, { role: 'model', parts: [{ text: '' }] }, { role: 'user', parts: [{ text: 'again' }] }],
    'text-block-empty',
  ],
];

function lastRequestWasValid(): void {
  const last = emulator.requests.at(-1);
  assert.ok(last !== undefined);
  assert.equal(last.wire, 'gemini');
  assert.equal(last.status, 200, JSON.stringify(last.violations));
}

describe('createSanitizingFetch on the Gemini wire', () => {
  test('control: without it, the real SDK sends each poisoned history and gets the 400', async () => {
    for (const [what, contents, rule] of poisoned) {
      await assert.rejects(
        client().models.generateContent({ model: MODEL, contents }),
        (error: unknown) => error instanceof ApiError && error.status === 400,
        what,
      );
      assert.equal(emulator.requests.at(-1)?.violations[0]?.rule, rule, what);
    }
  });

  test('@google/genai generateContent: each poisoned history is repaired on the way out, the answer comes back', async () => {
    for (const [what, contents, rule] of poisoned) {
      events.length = 0;
      emulator.push({ text: 'repaired and answered' });
      const reply = await through(() => client().models.generateContent({ model: MODEL, contents }));
      assert.equal(reply.text, 'repaired and answered', what);
      lastRequestWasValid();
      assert.equal(events.length, 1, what);
      assert.equal(events[0]?.wire, 'gemini');
      assert.ok(events[0]?.rules.includes(rule as never), `${what}: ${rule} in ${events[0]?.rules.join(', ')}`);
      assert.match(events[0]?.url ?? '', /\/models\/gemini-2\.5-pro:generateContent$/);
    }
  });

  test('@google/genai generateContentStream: repaired, the thoughtSignature carried through, the chunks relayed', async () => {
    events.length = 0;
    emulator.push({ text: 'streamed after the repair', stream: { chunkSize: 4 } });
    const [, contents] = poisoned[0] ?? [];
    let text = '';
    await through(async () => {
      for await (const chunk of await client().models.generateContentStream({ model: MODEL, contents: contents ?? [] }))
        text += chunk.text ?? '';
    });
    assert.equal(text, 'streamed after the repair');
    lastRequestWasValid();
    const sent = emulator.requests.at(-1)?.body.contents as Content[];
    assert.equal(sent[1]?.parts?.[0]?.thoughtSignature, 'c2lnbmVk', 'the signed call part kept its signature');
    assert.equal(
      sent[2]?.parts?.filter((part) => part.functionResponse !== undefined).length,
      1,
      'one response for the one call',
    );
  });

  test('@ai-sdk/google with it as its fetch: a history with an unanswered call is answered, streamed or not', async () => {
    const messages = [
      { role: 'user' as const, content: 'read a.txt' },
      {
        role: 'assistant' as const,
        content: [
          { type: 'tool-call' as const, toolCallId: 'call_1', toolName: 'read_file', input: { file: 'a.txt' } },
        ],
      },
      { role: 'user' as const, content: 'never mind, say hi' },
    ];
    const baseURL = `${served.url}/v1beta`;
    const unsanitized = createGoogleGenerativeAI({ apiKey: KEY, baseURL, fetch: original });
    await assert.rejects(generateText({ model: unsanitized(MODEL), maxRetries: 0, messages }));
    assert.equal(emulator.requests.at(-1)?.violations[0]?.rule, 'tool-calls-unanswered');
    events.length = 0;
    const provider = createGoogleGenerativeAI({ apiKey: KEY, baseURL, fetch: sanitizing });
    emulator.push(
      { text: 'hi from the AI SDK path' },
      { text: 'streamed from the AI SDK path', stream: { chunkSize: 5 } },
    );
    const response = await generateText({ model: provider(MODEL), maxRetries: 0, messages });
    assert.equal(response.text, 'hi from the AI SDK path');
    lastRequestWasValid();
    const streamed = streamText({ model: provider(MODEL), maxRetries: 0, messages });
    let text = '';
    for await (const delta of streamed.textStream) text += delta;
    assert.equal(text, 'streamed from the AI SDK path');
    lastRequestWasValid();
    assert.equal(events.length, 2);
    assert.ok(events.every((event) => event.wire === 'gemini' && event.rules.includes('tool-calls-unanswered')));
  });

  test('a valid request goes out byte for byte; a ?key= in the URL is forwarded but never in an event', async () => {
    const sent: { url: string; body: unknown }[] = [];
    const recording = createSanitizingFetch({
      fetch: async (input, init) => {
        sent.push({ url: String(input instanceof Request ? input.url : input), body: init?.body });
        return original(input, init);
      },
      onRepair: (event) => events.push(event),
    });
    events.length = 0;
    const valid = JSON.stringify({ contents: [user] });
    const path = `${served.url}/v1beta/models/${MODEL}:generateContent?key=${KEY}`;
    const ok = await recording(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: valid });
    assert.equal(ok.status, 200);
    assert.equal(sent[0]?.body, valid, 'the very same string');
    assert.equal(events.length, 0);
    const count = await recording(`${served.url}/v1beta/models/${MODEL}:countTokens?key=${KEY}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: poisoned[0]?.[1] }),
    });
    assert.equal(count.status, 200, 'countTokens is repaired too');
    assert.ok(sent[1]?.url.includes(`key=${KEY}`), 'the key goes upstream as it came');
    assert.equal(events.length, 1);
    assert.match(events[0]?.url ?? '', /:countTokens\?key=REDACTED$/);
    const seen = JSON.stringify([events, emulator.requests]);
    assert.ok(!seen.includes('never-logged'), 'the key is in no event and no record');
  });

  test('a body that is not the shape goes out untouched; a 400 the repair cannot change comes back as it came, once', async () => {
    const bodies: unknown[] = [];
    const counting = createSanitizingFetch({
      fetch: async (input, init) => {
        bodies.push(init?.body);
        return original(input, init);
      },
    });
    const url = `${served.url}/v1beta/models/${MODEL}:generateContent`;
    const headers = { 'content-type': 'application/json', 'x-goog-api-key': KEY };
    const notJson = await counting(url, { method: 'POST', headers, body: '{"contents": [' });
    assert.equal(notJson.status, 400);
    assert.deepEqual(bodies, ['{"contents": ['], 'sent as it came, once');
    // A provider that rejects what the core finds valid (a rule it cannot decide, e.g. a forged
    // thoughtSignature): the repair changes nothing, so the 400 goes back without a retry.
    let sent = 0;
    const refusing = createSanitizingFetch({
      fetch: async () => {
        sent += 1;
        return new Response(
          JSON.stringify({
            error: {
              code: 400,
              message:
                'Please ensure that function call turn comes immediately after a user turn or after a function response turn.',
              status: 'INVALID_ARGUMENT',
            },
          }),
          { status: 400, headers: { 'content-type': 'application/json' } },
        );
      },
    });
    const refused = await refusing(url, { method: 'POST', headers, body: JSON.stringify({ contents: [user] }) });
    assert.equal(refused.status, 400);
    assert.equal(((await refused.json()) as any).error.status, 'INVALID_ARGUMENT');
    assert.equal(sent, 1);
  });
  test('@google/genai on gemini-3.8-flash: a final model turn gets the 400, and the one heal retry (told by the model in the URL) drops it', async () => {
    events.length = 0;
    emulator.push({ text: 'answered without the prefill' });
    const before = emulator.requests.length;
    const contents: Content[] = [user, { role: 'model', parts: [{ text: 'I will read' }] }];
    const reply = await through(() => client().models.generateContent({ model: 'gemini-3.8-flash', contents }));
    assert.equal(reply.text, 'answered without the prefill');
    assert.deepEqual(
      emulator.requests.slice(before).map((request) => request.status),
      [400, 200],
    );
    assert.deepEqual(
      events.map((event) => [event.attempt, event.rules, event.rejectedFor]),
      [['heal', ['ends-with-assistant'], 'ends-with-assistant']],
    );
    assert.ok(!JSON.stringify(events).includes(KEY));
  });
});
