import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  classifyError,
  HEALABLE_RULES,
  isHealableRule,
  isPairingRule,
  PAIRING_RULES,
  profiles,
} from '../../src/index.js';

interface Entry {
  provider: string;
  id: string;
  errors: string[];
  match?: string;
}
const catalogue = JSON.parse(
  readFileSync(new URL('../fixtures/shared/rules.json', import.meta.url), 'utf8'),
) as Entry[];

// Texts the catalogue lists under one rule but which are, word for word, another rule's text (its notes say so).
const sharedText: Record<string, string[]> = {
  'openai-chat/tool-result-not-adjacent': ['tool-result-orphan', 'tool-calls-unanswered'],
  'openai-chat/tool-result-id-mismatch': ['tool-calls-unanswered'],
  'openrouter/upstream-wrapped': ['tool-result-orphan'],
  'mistral/tool-result-id-mismatch': ['tool-result-id-mismatch', 'tool-call-id-duplicate'],
};

test('every error text in the catalogue is classified as its rule', () => {
  let checked = 0;
  for (const entry of catalogue) {
    if (entry.match === undefined) continue;
    for (const text of entry.errors) {
      const got = classifyError(400, text);
      // Some texts are word for word the same under two rules (DeepSeek's duplicate-id text is OpenAI's duplicate-result text): either is right.
      const ambiguous = catalogue
        .filter((other) => other.match !== undefined && new RegExp(other.match).test(text))
        .map((other) => other.id);
      const accepted = [...(sharedText[`${entry.provider}/${entry.id}`] ?? [entry.id]), ...ambiguous];
      assert.ok(
        got !== undefined && accepted.includes(got.rule),
        `${entry.provider}/${entry.id}: ${JSON.stringify(text.slice(0, 120))} -> ${got?.rule}`,
      );
      checked += 1;
    }
  }
  assert.ok(checked > 100, `checked ${checked} texts`);
});

test('gateway wrappers are unwrapped', () => {
  const deepseek =
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)";
  const cases: [string, unknown, string][] = [
    ['plain OpenAI body', { error: { message: deepseek, type: 'invalid_request_error' } }, 'tool-calls-unanswered'],
    ['the body as text', JSON.stringify({ error: { message: deepseek } }), 'tool-calls-unanswered'],
    [
      'LiteLLM prefix',
      `litellm.BadRequestError: DeepseekException - ${JSON.stringify({ error: { message: deepseek } })}`,
      'tool-calls-unanswered',
    ],
    [
      'OpenRouter metadata.raw',
      {
        error: {
          message: 'Provider returned error',
          code: 400,
          metadata: {
            raw: JSON.stringify({
              type: 'error',
              error: {
                type: 'invalid_request_error',
                message:
                  'messages.4.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
              },
            }),
            provider_name: 'Anthropic',
          },
        },
      },
      'tool-result-orphan',
    ],
    [
      'DashScope prefix',
      {
        error: {
          message:
            '<400> InternalError.Algo.InvalidParameter: messages with role "tool" must be a response to a preceeding message with "tool_calls".',
          code: 'invalid_parameter_error',
        },
      },
      'tool-result-orphan',
    ],
    [
      'Vertex: Anthropic JSON inside error.message',
      {
        error: {
          code: 400,
          message: JSON.stringify({
            type: 'error',
            error: { message: 'messages.1.content.1: `tool_use` ids must be unique' },
          }),
          status: 'INVALID_ARGUMENT',
        },
      },
      'tool-call-id-duplicate',
    ],
    [
      'Mistral body',
      {
        object: 'error',
        message: "Unexpected role 'user' after role 'tool'",
        type: 'invalid_request_message_order',
        code: '3230',
      },
      'tool-followed-by-user',
    ],
  ];
  for (const [name, body, rule] of cases) assert.equal(classifyError(400, body)?.rule, rule, name);
});

test('not a message-array error: undefined', () => {
  assert.equal(classifyError(400, { error: { message: 'Invalid API key' } }), undefined);
  assert.equal(classifyError(429, { error: { message: 'Rate limit reached' } }), undefined);
  assert.equal(classifyError(200, 'ok'), undefined);
  assert.equal(classifyError(400, 'not json at all <html>'), undefined);
  assert.equal(classifyError(400, null), undefined);
});

test('pairing rules are the ones a heal retries on', () => {
  assert.equal(isHealableRule('tool-calls-unanswered'), true);
  assert.equal(isHealableRule('tool-result-orphan'), true);
  assert.equal(isHealableRule('json-keyword-required'), false);
  assert.equal(isHealableRule('name-pattern'), false);
});

test('every violation check words is classified back as its rule (the emulator answers with these texts)', async () => {
  const { check, profileNames } = await import('../../src/index.js');
  const { readdirSync } = await import('node:fs');
  const corpusDirectory = new URL('../fixtures/shared/corpus/', import.meta.url);
  const histories = readdirSync(corpusDirectory)
    .filter((file) => file.endsWith('.json'))
    .map(
      (file) =>
        JSON.parse(readFileSync(new URL(file, corpusDirectory), 'utf8')) as { format: string; messages: unknown[] },
    )
    .filter((record) => record.format === 'openai-chat')
    .map((record) => record.messages);
  const extra = [
    [
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
    ],
    [{ role: 'user', content: 'q' }, 'not a message'],
    [
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
          { id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'a', content: 'r' },
      { role: 'tool', tool_call_id: 'a', content: 'r' },
    ],
  ];
  const seen = new Set<string>();
  for (const history of [...histories, ...extra]) {
    for (const profile of profileNames) {
      for (const violation of check(history as never, { profile, scope: 'request', thinking: true })) {
        const got = classifyError(400, { error: { message: violation.message } });
        assert.ok(got !== undefined, `${profile} ${violation.rule}: ${violation.message}`);
        const ambiguous = catalogue
          .filter((entry) => entry.match !== undefined && new RegExp(entry.match).test(violation.message))
          .map((entry) => entry.id);
        assert.ok(
          got.rule === violation.rule ||
            ambiguous.includes(got.rule) ||
            (isHealableRule(got.rule) && isHealableRule(violation.rule)),
          `${profile} ${violation.rule} read back as ${got.rule}: ${violation.message}`,
        );
        seen.add(violation.rule);
      }
    }
  }
  assert.ok(seen.size >= 15, `covered ${[...seen].join(', ')}`);
});

test('the pairing rules and the rules a heal may fix are two lists, each named after what it holds', () => {
  assert.deepEqual([...PAIRING_RULES].sort(), [
    'message-malformed',
    'tool-call-id-duplicate',
    'tool-call-id-missing',
    'tool-calls-unanswered',
    'tool-result-duplicate',
    'tool-result-id-mismatch',
    'tool-result-not-adjacent',
    'tool-result-orphan',
  ]);
  assert.equal(HEALABLE_RULES.size, 16);
  assert.equal(isPairingRule('roles-not-alternating'), false);
  assert.equal(isHealableRule('roles-not-alternating'), true);
  assert.equal(isPairingRule('message-malformed'), true);
  assert.equal(isHealableRule('message-malformed'), false);
  // Every profile enforces every pairing rule.
  for (const profile of Object.values(profiles))
    for (const rule of PAIRING_RULES)
      assert.ok(
        profile.rules.some((enforced) => enforced.id === rule),
        `${profile.name} enforces ${rule}`,
      );
});
