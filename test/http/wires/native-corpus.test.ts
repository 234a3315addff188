import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { classifyError } from '../../../src/core/index.js';
import type { RepairEvent } from '../../../src/http/index.js';
import { createSanitizingFetch } from '../../../src/http/index.js';
import { useListeningEmulator } from '../../support/listening-emulator.js';

/**
 * Every Responses and Gemini case of the shared corpus, sent as the history of a request to the
 * strict emulator over a socket: straight, each gets the provider's 400; through the sanitizing
 * fetch, each is answered and the emulator saw only valid requests.
 */
const directory = new URL('../../fixtures/shared/corpus/', import.meta.url);
const cases = readdirSync(directory)
  .filter((name) => name.endsWith('.json'))
  .map((name) => ({
    name,
    ...(JSON.parse(readFileSync(new URL(name, directory), 'utf8')) as {
      format: string;
      error: string;
      messages: unknown[];
    }),
  }))
  .filter((entry) => entry.format === 'gemini' || entry.format === 'openai-responses');

const served = useListeningEmulator({ wires: ['responses', 'gemini'] });
const { emulator } = served;

function requestOf(entry: (typeof cases)[number]): [string, RequestInit] {
  if (entry.format === 'gemini')
    return [
      `${served.url}/v1beta/models/gemini-2.5-pro:generateContent`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': 'test-key' },
        body: JSON.stringify({ contents: entry.messages }),
      },
    ];
  return [
    `${served.url}/v1/responses`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
      body: JSON.stringify({ model: 'gpt-5', input: entry.messages }),
    },
  ];
}

test('the corpus has its three Gemini and two Responses cases', () => {
  assert.deepEqual(
    cases.map((entry) => `${entry.name.slice(0, 3)} ${entry.format}`),
    ['028 gemini', '029 gemini', '031 gemini', '044 openai-responses', '045 openai-responses'],
  );
});

for (const entry of cases) {
  test(`${entry.name}: straight the provider's 400; through the sanitizing fetch answered, the emulator saw only valid requests`, async () => {
    const straight = await fetch(...requestOf(entry));
    const body = (await straight.json()) as any;
    assert.equal(straight.status, 400, JSON.stringify(body));
    if (entry.format === 'gemini') assert.equal(body.error.status, 'INVALID_ARGUMENT');
    else assert.equal(body.error.type, 'invalid_request_error');
    // Where the case was reported from this provider (031 came through Bedrock), the emulator's words name the same rule.
    const reported = classifyError(400, entry.error);
    if (reported?.provider === (entry.format === 'gemini' ? 'gemini' : 'openai-responses'))
      assert.equal(classifyError(400, body)?.rule, reported.rule, `${body.error.message} / ${entry.error}`);
    else assert.ok(classifyError(400, body) !== undefined, 'the emulator words it so the catalogue recognises it');

    const events: RepairEvent[] = [];
    emulator.push({ text: 'answered after the repair' });
    const before = emulator.requests.length;
    const repaired = await createSanitizingFetch({ onRepair: (event) => events.push(event) })(...requestOf(entry));
    assert.equal(repaired.status, 200);
    const seen = emulator.requests.slice(before);
    assert.deepEqual(
      seen.map((request) => [request.status, request.violations.length]),
      [[200, 0]],
    );
    assert.equal(events.length, 1);
    assert.equal(events[0]?.wire, entry.format === 'gemini' ? 'gemini' : 'responses');
  });
}
