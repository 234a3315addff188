import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { poisonings } from '../../e2e/agents/poison.js';
import type { RuleId } from '../../src/core/index.js';
import type { RepairEvent } from '../../src/http/index.js';
import { createSanitizingFetch } from '../../src/http/index.js';
import { CLAUDE_CODE_REQUEST, claudeCodeMessages, claudeCodeMessagesOf } from '../support/claude-code-session.js';
import { useListeningEmulator } from '../support/listening-emulator.js';

/**
 * Claude Code's own session files, resumed as Claude Code sends them (its model, `thinking:
 * adaptive`, `stream: true`, `?beta=true`), at the strict emulator over a socket: a poisoned one
 * gets Anthropic's 400 with the catalogue's text for its rule straight, and through the
 * sanitizing fetch the emulator sees only valid requests. The whitespace-only text beside the
 * call is Claude Code 2.1.332's real failure (e2e/agents); the others are the shapes the core did
 * not detect before (test/fixtures/agents/claude-code/README.md).
 */
const served = useListeningEmulator({ wires: ['anthropic'] });
const { emulator } = served;
const HEADERS = { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' };
const catalogue = JSON.parse(readFileSync(new URL('../fixtures/shared/rules.json', import.meta.url), 'utf8')) as {
  provider: string;
  id: string;
  match: string;
}[];
const matchOf = (id: string): RegExp =>
  new RegExp(catalogue.find((entry) => entry.provider === 'anthropic' && entry.id === id)?.match ?? 'no such entry');

const original = readFileSync(
  new URL('../fixtures/agents/claude-code/read-tool-loop.claude-code-2.1.332.jsonl', import.meta.url),
  'utf8',
);
const whitespace = poisonings.find((entry) => entry.name === 'whitespace-text-event-before-tool-use');
assert.ok(whitespace !== undefined);

const cases: { name: string; rule: RuleId; messages: unknown[] }[] = [
  {
    name: 'whitespace-only text block beside the tool_use (hermes-agent#70475)',
    rule: 'text-block-empty',
    messages: claudeCodeMessagesOf(whitespace.apply(original, () => 'blank-uuid').text),
  },
  {
    name: 'tool_use in the user message',
    rule: 'tool-use-wrong-role',
    messages: claudeCodeMessages('read-tool-loop.claude-code-2.1.332.tool-use-in-user-message.jsonl'),
  },
  {
    name: 'tool_use.input as a JSON string',
    rule: 'tool-call-arguments-invalid-json',
    messages: claudeCodeMessages('read-tool-loop.claude-code-2.1.332.tool-input-as-string.jsonl'),
  },
];

for (const entry of cases) {
  test(`Claude Code's session, ${entry.name}: straight the 400 (${entry.rule}); through the sanitizing fetch answered, only valid requests seen`, async () => {
    const body = JSON.stringify({ ...CLAUDE_CODE_REQUEST, stream: true, messages: entry.messages });
    const url = `${served.url}/v1/messages?beta=true`;
    const straight = await fetch(url, { method: 'POST', headers: HEADERS, body });
    assert.equal(straight.status, 400);
    const answer = (await straight.json()) as { type: string; error: { type: string; message: string } };
    assert.equal(answer.type, 'error');
    assert.equal(answer.error.type, 'invalid_request_error');
    assert.match(answer.error.message, matchOf(entry.rule));
    assert.equal(emulator.requests.at(-1)?.violations[0]?.rule, entry.rule);

    const events: RepairEvent[] = [];
    const sanitizing = createSanitizingFetch({ onRepair: (event) => events.push(event) });
    const before = emulator.requests.length;
    const healed = await sanitizing(url, { method: 'POST', headers: HEADERS, body });
    assert.equal(healed.status, 200);
    assert.match(await healed.text(), /event: message_stop/);
    assert.deepEqual(
      emulator.requests.slice(before).map((seen) => [seen.status, seen.violations.length]),
      [[200, 0]],
    );
    assert.ok(events.some((event) => event.rules.includes(entry.rule)));
  });
}

test('the whole Claude Code session unpoisoned, with its model and thinking: 200, nothing repaired', async () => {
  const events: RepairEvent[] = [];
  const sanitizing = createSanitizingFetch({ onRepair: (event) => events.push(event) });
  const body = JSON.stringify({
    ...CLAUDE_CODE_REQUEST,
    messages: claudeCodeMessages('read-tool-loop.claude-code-2.1.332.jsonl'),
  });
  const response = await sanitizing(`${served.url}/v1/messages?beta=true`, { method: 'POST', headers: HEADERS, body });
  assert.equal(response.status, 200);
  assert.deepEqual(events, []);
});

test('a prefill for a model without one: the default repair leaves it, the 400 is healed with the strongest repair, once', async () => {
  const events: RepairEvent[] = [];
  const sanitizing = createSanitizingFetch({ onRepair: (event) => events.push(event) });
  const body = JSON.stringify({
    model: 'claude-sonnet-4-6',
    max_tokens: 1024,
    messages: [
      { role: 'user', content: 'Name a colour.' },
      { role: 'assistant', content: 'Blue' },
    ],
  });
  const before = emulator.requests.length;
  const response = await sanitizing(`${served.url}/v1/messages`, { method: 'POST', headers: HEADERS, body });
  assert.equal(response.status, 200);
  const seen = emulator.requests.slice(before);
  assert.deepEqual(
    seen.map((request) => [request.status, request.violations[0]?.rule]),
    [
      [400, 'ends-with-assistant'],
      [200, undefined],
    ],
  );
  assert.deepEqual(
    events.map((event) => [event.attempt, event.rejectedFor, event.changes.map((change) => change.kind)]),
    [['heal', 'ends-with-assistant', ['prefill-dropped']]],
  );
});

test('thinking off, a signed thinking block in the final position: the emulator says so, the sanitizing fetch leaves it out', async () => {
  const messages = [
    { role: 'user', content: 'Weather?' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should call the weather tool.', signature: 'EqQBCkYIBxgCKkB' },
        { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A', content: '18C' }] },
  ];
  const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages });
  const url = `${served.url}/v1/messages`;
  const straight = await fetch(url, { method: 'POST', headers: HEADERS, body });
  assert.equal(straight.status, 400);
  assert.match(
    ((await straight.json()) as { error: { message: string } }).error.message,
    matchOf('thinking-when-disabled'),
  );
  const on = await fetch(url, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({ ...JSON.parse(body), thinking: { type: 'enabled', budget_tokens: 1024 } }),
  });
  assert.equal(on.status, 200, 'with thinking on the same history is valid');
  const before = emulator.requests.length;
  const healed = await createSanitizingFetch()(url, { method: 'POST', headers: HEADERS, body });
  assert.equal(healed.status, 200);
  assert.deepEqual(
    emulator.requests.slice(before).map((request) => request.status),
    [200],
  );
});
