import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { checkChatEveryRule } from '../../src/core/check-chat.js';
import { type CheckOptions, check, type Message, type ProfileName, profiles } from '../../src/index.js';
import { corrupted, shapeOf, validHistory } from '../support/histories.js';

/**
 * The clean screen (src/core/clean-screen.ts) only decides whether the per-message rules run on a message: a check
 * with it finds exactly what a check visiting every rule on every message finds, in the same order with the same
 * wording, for every profile and option, on valid histories, damaged ones and entries of any odd shape.
 */
const profileNames = Object.keys(profiles) as ProfileName[];
const runs = Math.max(100, Math.floor(Number(process.env['UNSTUCK_PROPERTY_RUNS'] ?? 10_400) / 20));
const seed =
  process.env['UNSTUCK_PROPERTY_SEED'] === undefined ? 20261202 : Number(process.env['UNSTUCK_PROPERTY_SEED']);

const options: fc.Arbitrary<CheckOptions> = fc.record(
  {
    level: fc.constantFrom<'default' | 'strongest'>('strongest', 'default'),
    scope: fc.constantFrom<'history' | 'request'>('history', 'request'),
    thinking: fc.boolean(),
    model: fc.constantFrom('deepseek-reasoner', 'deepseek-chat', 'kimi-k2-thinking'),
    foldRepeatedUserMessages: fc.boolean(),
  },
  { requiredKeys: [] },
);

const id = fc.constantFrom('call_1', 'call_2', 'abcDEF123', '', 'x');
const field = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constantFrom('', 'text', 'same'),
  fc.integer({ min: -1, max: 2 }),
  fc.boolean(),
  fc.constant([]),
  fc.constant([{ type: 'text', text: 'a' }]),
  fc.constant([{ type: 'text', text: '' }]),
  fc.constant([{ type: 'bogus' }]),
  fc.constant({}),
);
const toolCall = fc.oneof(
  fc.record(
    {
      id,
      type: fc.constant('function'),
      function: fc.oneof(
        fc.record({ name: fc.constantFrom('read', 'run'), arguments: fc.constantFrom('{}', '{"a":1}', '', '[1]') }),
        fc.record({ name: field, arguments: field }, { requiredKeys: [] }),
        field,
      ),
    },
    { requiredKeys: [] },
  ),
  fc.record({ id, name: fc.constant('read'), arguments: fc.constant('{}') }),
  field,
);
/** One entry: mostly message-like, with every field the rules read drawn from odd values as well as good ones. */
const entry: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        role: fc.oneof(
          fc.constantFrom('system', 'user', 'assistant', 'tool', 'developer', 'function', 'latest_reminder', ''),
          field,
        ),
        content: field,
        tool_calls: fc.oneof(fc.array(toolCall, { maxLength: 3 }), field),
        tool_call_id: fc.oneof(id, field),
        reasoning_content: fc.oneof(fc.constantFrom('', 'thought'), field),
        prefix: fc.oneof(fc.constant(true), field),
        name: fc.constantFrom('read', 'x'),
        function_call: fc.constant({ name: 'read', arguments: '{}' }),
        extra: fc.constant(1),
      },
      { requiredKeys: ['role'] },
    ),
  },
  { weight: 1, arbitrary: field },
);

function same(messages: readonly unknown[], profile: ProfileName, extra: CheckOptions): void {
  const withProfile = { ...extra, profile };
  assert.deepEqual(
    check(messages, withProfile),
    checkChatEveryRule(messages as Message[], withProfile),
    `the screen changed what check finds (${profile}, ${JSON.stringify(extra)})`,
  );
}

test('the clean screen finds what every rule finds: entries of any shape', () => {
  fc.assert(fc.property(fc.array(entry, { maxLength: 12 }), fc.constantFrom(...profileNames), options, same), {
    numRuns: runs * 4,
    seed,
  });
});

for (const profile of profileNames) {
  test(`${profile}: the clean screen finds what every rule finds on valid and damaged histories`, () => {
    const shape = shapeOf(profile);
    fc.assert(
      fc.property(
        fc.oneof(
          validHistory(shape),
          corrupted(shape).map(({ damaged }) => damaged),
        ),
        fc.constantFrom(...profileNames),
        options,
        same,
      ),
      { numRuns: runs, seed },
    );
  });
}

test('a profile object that shares a built-in rule list but not its traits is screened by its own traits', () => {
  // role-unknown on a profile that knows fewer roles, and content-null where content is always required.
  const narrow = { ...profiles.openai, roles: new Set(['user', 'assistant']), contentAlwaysRequired: true };
  const history: Message[] = [
    { role: 'system', content: 'rules' },
    { role: 'user', content: 'hi' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'c', content: 'ok' },
  ];
  assert.deepEqual(check(history, { profile: narrow }), checkChatEveryRule(history, { profile: narrow }));
  assert.deepEqual(
    check(history, { profile: narrow }).map((violation) => violation.rule),
    ['role-unknown', 'content-null', 'role-unknown'],
  );
});
