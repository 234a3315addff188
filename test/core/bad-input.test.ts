import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  check,
  classifyError,
  type FormatName,
  isUnstuckError,
  type Message,
  type ProfileName,
  repair,
} from '../../src/index.js';

/**
 * Every bad value gets a typed UnstuckError (code INPUT_INVALID) or a violation,
 * never an untyped throw and never "valid".
 */
const user = (content: unknown) => ({ role: 'user', content }) as Message;
const profiles: ProfileName[] = ['openai', 'deepseek', 'qwen', 'mistral', 'moonshot', 'groq', 'anthropic', 'local'];

const malformedContents: [string, unknown, string][] = [
  [
    'a number',
    5,
    "Invalid type for 'messages[1].content': expected a string, null, or an array of content parts (objects with a 'type'), but got an integer instead.",
  ],
  [
    'a boolean',
    true,
    "Invalid type for 'messages[1].content': expected a string, null, or an array of content parts (objects with a 'type'), but got a boolean instead.",
  ],
  [
    'an object',
    { a: 1 },
    "Invalid type for 'messages[1].content': expected a string, null, or an array of content parts (objects with a 'type'), but got an object instead.",
  ],
  [
    'an array of arrays',
    [[1]],
    "Invalid type for 'messages[1].content[0]': expected a string, null, or an array of content parts (objects with a 'type'), but got an array instead.",
  ],
  [
    'a part of an unknown type',
    [{ type: 'bogus' }],
    "Invalid value for 'messages[1].content[0].type': 'bogus'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', 'audio', and 'file'.",
  ],
  [
    'a part without a type',
    [{ text: 'hi' }],
    "Invalid type for 'messages[1].content[0].type': expected a string, null, or an array of content parts (objects with a 'type'), but got no type instead.",
  ],
  [
    'a text part whose text is a number',
    [{ type: 'text', text: 5 }],
    "Invalid type for 'messages[1].content[0].text': expected a string, but got an integer instead.",
  ],
];

for (const [what, content, wording] of malformedContents) {
  test(`content that is ${what} is a message-malformed violation, and repair drops the message saying why`, () => {
    const messages = [user('hello'), { role: 'assistant', content: 'hi' } as Message, user(content)];
    const violations = check(messages, { profile: 'openai' });
    assert.deepEqual(violations, [
      { rule: 'message-malformed', index: 2, message: wording.replace('messages[1]', 'messages[2]') },
    ]);
    assert.equal(
      classifyError(400, { error: { message: wording } })?.rule,
      'message-malformed',
      'the wording classifies back to its rule',
    );
    const repaired = repair(messages, { profile: 'openai' });
    assert.deepEqual(repaired.messages, messages.slice(0, 2));
    assert.deepEqual(
      repaired.changes.map((change) => [change.kind, change.index]),
      [['malformed-dropped', 2]],
    );
    assert.match(repaired.changes[0]?.detail ?? '', /no provider takes its content/);
    for (const profile of profiles) {
      const malformed = (found: { rule: string; index: number }[]) =>
        found.filter((violation) => violation.rule === 'message-malformed').map((violation) => violation.index);
      assert.deepEqual(malformed(check(messages, { profile })), [2], profile);
      const result = repair(messages, { profile });
      assert.ok(
        result.changes.some((change) => change.kind === 'malformed-dropped' && change.index === 2),
        profile,
      );
      assert.deepEqual(malformed(check(result.messages, { profile })), []);
      assert.deepEqual(malformed(result.remaining), []);
    }
  });
}

test('DeepSeek words a malformed content as its serde front end does', () => {
  const [violation] = check([user(5)], { profile: 'deepseek' });
  assert.equal(
    violation?.message,
    'Failed to deserialize the JSON body into the target type: messages[0].content: invalid an integer, expected a string or an array of content parts',
  );
});

test('content parts the providers and gateways take stay valid', () => {
  const parts = [
    { type: 'text', text: 'look' },
    { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
    { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
    { type: 'file', file: { file_id: 'file_1' } },
  ];
  assert.deepEqual(check([user(parts)], { profile: 'openai' }), []);
  assert.deepEqual(
    check([user('a'), { role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] }, user('b')], {
      profile: 'openai',
    }),
    [],
  );
  assert.deepEqual(
    check([user(null), user(''), user([])], { profile: 'local' }).filter(
      (violation) => violation.rule === 'message-malformed',
    ),
    [],
  );
});

const notArrays: [string, unknown][] = [
  ['undefined', undefined],
  ['null', null],
  ['an object', { role: 'user', content: 'x' }],
  ['a string', 'messages'],
  ['a number', 3],
];

for (const [what, value] of notArrays) {
  test(`check and repair, in OpenAI chat and the native formats, of ${what} throw a typed INPUT_INVALID error`, () => {
    for (const run of [
      () => check(value as Message[]),
      () => repair(value as Message[]),
      () => check(value as unknown[], { format: 'anthropic-messages' }),
      () => repair(value as unknown[], { format: 'gemini-contents' }),
    ]) {
      assert.throws(
        run,
        (error: unknown) =>
          isUnstuckError(error) &&
          error.code === 'INPUT_INVALID' &&
          /expected an array of messages/.test(error.message),
      );
    }
  });
}

test('an entry that is null is a violation (never a TypeError) for every profile and level, and repair drops it', () => {
  for (const profile of profiles) {
    for (const level of ['default', 'strongest'] as const) {
      for (const scope of ['history', 'request'] as const) {
        const messages = [null, user('q'), null] as unknown as Message[];
        assert.deepEqual(
          check(messages, { profile, level, scope, thinking: true })
            .filter((violation) => violation.rule === 'message-malformed')
            .map((violation) => violation.index),
          [0, 2],
          `${profile} ${level} ${scope}`,
        );
        assert.deepEqual(
          repair(messages, { profile, level, scope, thinking: true })
            .changes.filter((change) => change.kind === 'malformed-dropped')
            .map((change) => change.index),
          [0, 2],
        );
      }
    }
  }
});

test('values JSON cannot hold (a cycle, a BigInt) and getters that throw give a typed error, never an untyped one', () => {
  const cyclicPart: Record<string, unknown> = { type: 'text', text: 'again' };
  cyclicPart['self'] = cyclicPart;
  const cyclicArguments: Record<string, unknown> = {};
  cyclicArguments['self'] = cyclicArguments;
  const call = (args: unknown) =>
    ({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: args } }],
    }) as unknown as Message;
  const flatCall = (args: unknown) =>
    ({ role: 'assistant', content: null, tool_calls: [{ id: 'a', name: 'f', arguments: args }] }) as unknown as Message;
  const throwing = {
    role: 'user',
    get content(): string {
      throw new Error('boom');
    },
  } as Message;
  const cases: [string, Message[], { profile: ProfileName; level?: 'strongest' }][] = [
    [
      'a cyclic content part repeated',
      [user([cyclicPart]), user([cyclicPart])],
      { profile: 'openai', level: 'strongest' },
    ],
    [
      'a BigInt in a repeated content part',
      [user([{ type: 'text', text: 'x', n: 1n }]), user([{ type: 'text', text: 'x', n: 1n }])],
      { profile: 'deepseek', level: 'strongest' },
    ],
    [
      'cyclic arguments',
      [user('q'), call(cyclicArguments), { role: 'tool', tool_call_id: 'a', content: 'r' }],
      { profile: 'qwen' },
    ],
    [
      'BigInt arguments',
      [user('q'), call({ n: 1n }), { role: 'tool', tool_call_id: 'a', content: 'r' }],
      { profile: 'qwen' },
    ],
    [
      'BigInt arguments of a flattened call',
      [user('q'), flatCall({ n: 1n }), { role: 'tool', tool_call_id: 'a', content: 'r' }],
      { profile: 'openai' },
    ],
    ['a getter that throws', [throwing], { profile: 'openai' }],
  ];
  for (const [what, messages, options] of cases) {
    // Either a violation (check finds something, repair changes or reports it) or a typed error.
    for (const [name, run] of [
      ['check', () => check(messages, options).length > 0],
      [
        'repair',
        () => {
          const result = repair(messages, options);
          return result.changed || result.remaining.length > 0;
        },
      ],
    ] as const) {
      let outcome: boolean;
      try {
        outcome = run();
      } catch (error) {
        assert.ok(isUnstuckError(error), `${name}, ${what}: untyped ${String(error)}`);
        assert.equal(error.code, 'INPUT_INVALID');
        assert.match(error.message, /not plain JSON data/);
        assert.ok(error.cause !== undefined, 'the original error is the cause');
        continue;
      }
      assert.ok(outcome, `${name}, ${what}: neither a violation nor an error`);
    }
  }
});

test('an unknown format is one clear error, for check and repair alike', () => {
  for (const run of [
    () => check([], { format: 'openai-messages' as FormatName }),
    () => repair([], { format: 'gemini' as FormatName }),
  ])
    assert.throws(
      run,
      (error: unknown) =>
        isUnstuckError(error) &&
        error.code === 'USAGE' &&
        /unknown wire format '(openai-messages|gemini)' \(known: openai-chat, anthropic-messages, gemini-contents, responses-input\)/.test(
          error.message,
        ),
    );
});
