import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  claudeModelOf,
  supportsMidConversationSystem,
  supportsPrefill,
} from '../../src/core/formats/anthropic-model.js';
import { check as checkItems, classifyError, type RepairOptions, repair } from '../../src/index.js';
import { claudeCodeMessages } from '../support/claude-code-session.js';
import { deepFreeze } from '../support/lossless.js';

/**
 * The Anthropic rules a request decides (its model, its `thinking` setting, a block's place):
 * found worded as the catalogue's `match` reads them, repaired without editing or inventing a
 * signed thinking block, with ids that are a function of the input.
 */
const catalogue = JSON.parse(readFileSync(new URL('../fixtures/shared/rules.json', import.meta.url), 'utf8')) as {
  provider: string;
  id: string;
  match: string;
}[];
const matchOf = (id: string): RegExp =>
  new RegExp(catalogue.find((entry) => entry.provider === 'anthropic' && entry.id === id)?.match ?? 'no such entry');

const check = (messages: unknown[], options: RepairOptions = {}) =>
  checkItems(deepFreeze(messages), { ...options, format: 'anthropic-messages' });
const fix = (messages: unknown[], options: RepairOptions = {}) =>
  repair(deepFreeze(messages), { ...options, format: 'anthropic-messages' });
const rules = (messages: unknown[], options: RepairOptions = {}) =>
  check(messages, options).map((violation) => violation.rule);

const sessionMessages = (name: string) => claudeCodeMessages(name);
/** What Claude Code 2.1.332 sends (test/fixtures/agents/claude-code/, api-request lines). */
const CLAUDE_CODE: RepairOptions = { model: 'claude-opus-5-5', thinking: true };

describe('Anthropic: the rules a request decides', () => {
  test('tool-use-wrong-role: a tool_use in the user message holding the result (the Claude Code fixture) becomes text', () => {
    const messages = sessionMessages('read-tool-loop.claude-code-2.1.332.tool-use-in-user-message.jsonl');
    const found = check(messages, CLAUDE_CODE).filter((violation) => violation.rule === 'tool-use-wrong-role');
    assert.equal(found.length, 1);
    assert.match(found[0]?.message ?? '', matchOf('tool-use-wrong-role'));
    assert.equal(classifyError(400, found[0]?.message)?.rule, 'tool-use-wrong-role');
    const result = fix(messages, CLAUDE_CODE);
    assert.deepEqual(result.remaining, []);
    assert.deepEqual(check(result.messages, CLAUDE_CODE), []);
    const user = result.messages[found[0]?.index ?? -1] as { content: { type: string; text?: string }[] };
    assert.equal(user.content[0]?.type, 'tool_result', 'the result still leads');
    assert.match(user.content[1]?.text ?? '', /toolu_e2e_wrong_role.*Read.*\/dev\/null/);
    assert.deepEqual(
      result.changes.map((change) => change.kind),
      ['call-to-text'],
    );
  });

  test('a tool_result in an assistant message becomes text too', () => {
    const messages = [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'ok' },
          { type: 'tool_result', tool_use_id: 'x', content: 'r' },
        ],
      },
    ];
    assert.deepEqual(rules(messages), ['tool-use-wrong-role']);
    const result = fix(messages);
    assert.deepEqual(check(result.messages), []);
    assert.match(JSON.stringify(result.messages[1]), /tool_use_id x.*\] r/);
  });

  test('tool-call-arguments-invalid-json: the input as a JSON string (the Claude Code fixture) is parsed back; the id stays', () => {
    const messages = sessionMessages('read-tool-loop.claude-code-2.1.332.tool-input-as-string.jsonl');
    const found = check(messages, CLAUDE_CODE);
    assert.deepEqual(
      found.map((violation) => violation.rule),
      ['tool-call-arguments-invalid-json'],
    );
    assert.match(found[0]?.message ?? '', matchOf('tool-call-arguments-invalid-json'));
    const result = fix(messages, CLAUDE_CODE);
    assert.deepEqual(check(result.messages, CLAUDE_CODE), []);
    const call = (result.messages[found[0]?.index ?? -1] as { content: Record<string, unknown>[] }).content.find(
      (block) => block['type'] === 'tool_use',
    );
    assert.equal(call?.['id'], 'toolu_emu1_00');
    assert.deepEqual(call?.['input'], { file_path: '/tmp/unstuck-e2e-claude-9XmESF/work/notes.txt' });
  });

  test('an input that is not an object nor its JSON text is kept whole inside one', () => {
    for (const input of [null, [1, 2], 'not json', 42]) {
      const messages = [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'run', input }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'done' }] },
      ];
      assert.deepEqual(rules(messages), ['tool-call-arguments-invalid-json']);
      const result = fix(messages);
      assert.deepEqual(check(result.messages), []);
      const block = (result.messages[1] as { content: Record<string, unknown>[] }).content[0];
      assert.deepEqual(block?.['input'], {
        unstuck_unparsed_arguments: typeof input === 'string' ? input : JSON.stringify(input),
      });
    }
  });

  test("Claude Code's own failure: a whitespace-only text block beside the signed thinking and the tool_use; the thinking block is the same object after", () => {
    const messages = sessionMessages('read-tool-loop.claude-code-2.1.332.jsonl');
    assert.deepEqual(check(messages, CLAUDE_CODE), [], 'the session as Claude Code wrote it is valid');
    const [thinking, call] = (messages[1] as { content: Record<string, unknown>[] }).content;
    assert.equal(thinking?.['type'], 'thinking');
    // The shape of NousResearch/hermes-agent#70475, which Claude Code 2.1.332 sends as it is (e2e/agents).
    const poisoned = [...messages];
    poisoned[1] = { role: 'assistant', content: [thinking, { type: 'text', text: ' \n' }, call] };
    const found = check(poisoned, CLAUDE_CODE);
    assert.deepEqual(
      found.map((violation) => [violation.rule, violation.index]),
      [['text-block-empty', 1]],
    );
    assert.match(found[0]?.message ?? '', matchOf('text-block-empty'));
    const result = fix(poisoned, CLAUDE_CODE);
    assert.deepEqual(check(result.messages, CLAUDE_CODE), []);
    const repaired = (result.messages[1] as { content: unknown[] }).content;
    assert.equal(repaired.length, 2);
    assert.equal(repaired[0], thinking, 'the signed thinking block is the very same object');
    assert.equal(repaired[1], call, 'the call, its id and input untouched');
    for (let index = 2; index < poisoned.length; index += 1) assert.equal(result.messages[index], poisoned[index]);
  });

  test('thinking-when-disabled: only with thinking off (not when unknown); the final assistant loses its thinking, earlier turns keep theirs', () => {
    const thinking = { type: 'thinking', thinking: 'earlier', signature: 'sigA' };
    const current = { type: 'redacted_thinking', data: 'opaque' };
    const messages = [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: [thinking, { type: 'text', text: 'first answer' }] },
      { role: 'user', content: 'two' },
      { role: 'assistant', content: [current, { type: 'tool_use', id: 'toolu_1', name: 'run', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
    ];
    assert.deepEqual(rules(messages), [], 'thinking not known: not decided');
    assert.deepEqual(rules(messages, { thinking: true }), []);
    const found = check(messages, { thinking: false });
    assert.deepEqual(
      found.map((violation) => [violation.rule, violation.index]),
      [['thinking-when-disabled', 3]],
    );
    assert.match(found[0]?.message ?? '', matchOf('thinking-when-disabled'));
    const result = fix(messages, { thinking: false });
    assert.deepEqual(check(result.messages, { thinking: false }), []);
    assert.equal(result.messages[1], messages[1], 'an earlier turn keeps its thinking');
    assert.deepEqual((result.messages[3] as { content: unknown[] }).content, [messages[3]?.content[1]]);
    assert.deepEqual(
      result.changes.map((change) => [change.kind, change.index]),
      [['block-dropped', 3]],
    );
  });

  test('ends-with-assistant by model: 4.6 and later have no prefill; default leaves it with why, strongest drops it', () => {
    const messages = [
      { role: 'user', content: 'Name a colour.' },
      { role: 'assistant', content: 'Blue' },
    ];
    for (const model of [
      'claude-sonnet-4-6',
      'claude-opus-4-6-20260205',
      'claude-opus-5-5',
      'us.anthropic.claude-sonnet-4-6-v1:0',
    ]) {
      const found = check(messages, { model });
      assert.deepEqual(
        found.map((violation) => violation.rule),
        ['ends-with-assistant'],
        model,
      );
      assert.match(found[0]?.message ?? '', matchOf('ends-with-assistant'));
      assert.equal(classifyError(400, found[0]?.message)?.rule, 'ends-with-assistant');
      const kept = fix(messages, { model });
      assert.equal(kept.changed, false);
      assert.deepEqual(
        kept.remaining.map((left) => left.rule),
        ['ends-with-assistant'],
      );
      assert.match(kept.remaining[0]?.why ?? '', /strongest/);
      const dropped = fix(messages, { model, level: 'strongest' });
      assert.deepEqual(dropped.messages, [messages[0]]);
      assert.deepEqual(
        dropped.changes.map((change) => [change.kind, change.index]),
        [['prefill-dropped', 1]],
      );
    }
    for (const model of [
      'claude-sonnet-4-5',
      'claude-3-7-sonnet-20250219',
      'claude-haiku-4-5',
      'claude-sonnet-4-20250514',
      'my-gateway-alias',
      undefined,
    ])
      assert.deepEqual(
        rules(messages, model === undefined ? {} : { model }),
        [],
        `${model}: a prefill it takes, or a model not read`,
      );
    const call = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'run', input: {} }] },
    ];
    assert.deepEqual(
      rules(call, { model: 'claude-sonnet-4-6' }),
      ['tool-calls-unanswered'],
      'a trailing call is not a prefill',
    );
  });

  test('trailing-whitespace-final-assistant: a prefill for a model that takes one is trimmed; a past answer in the middle is not', () => {
    const messages = [
      { role: 'user', content: 'Give me a haiku.' },
      { role: 'assistant', content: [{ type: 'text', text: 'Here it is: \n' }] },
    ];
    const found = check(messages, { model: 'claude-sonnet-4-5' });
    assert.deepEqual(
      found.map((violation) => violation.rule),
      ['trailing-whitespace-final-assistant'],
    );
    assert.match(found[0]?.message ?? '', matchOf('trailing-whitespace-final-assistant'));
    const result = fix(messages, { model: 'claude-sonnet-4-5' });
    assert.deepEqual(result.messages[1], { role: 'assistant', content: [{ type: 'text', text: 'Here it is:' }] });
    assert.deepEqual(
      result.changes.map((change) => change.kind),
      ['text-trimmed'],
    );
    assert.deepEqual(rules([...messages, { role: 'user', content: 'thanks' }]), []);
  });

  test('system-role-in-messages by model: Opus 4.8 and the 5 generation take it right after a user turn; older models say so', () => {
    const after = [
      { role: 'user', content: 'Hi' },
      { role: 'system', content: 'Be terse from now on.' },
      { role: 'user', content: 'Go on' },
    ];
    const leading = [{ role: 'system', content: 'You are terse.' }, ...after.slice(0, 1)];
    for (const model of ['claude-opus-4-8', 'claude-opus-5-5', 'claude-sonnet-5']) {
      assert.deepEqual(rules(after, { model }), [], model);
      assert.deepEqual(rules(leading, { model }), ['system-role-in-messages'], `${model}: not after a user turn`);
    }
    const old = check(after, { model: 'claude-sonnet-4-5' });
    assert.deepEqual(
      old.map((violation) => violation.rule),
      ['system-role-in-messages'],
    );
    assert.match(old[0]?.message ?? '', /role 'system' is not supported on this model/);
    assert.match(old[0]?.message ?? '', matchOf('system-role-in-messages'));
    assert.match(check(after)[0]?.message ?? '', /Unexpected role "system"/, 'no model: the top-level system text');
    assert.equal(supportsMidConversationSystem('claude-opus-4-7'), false);
    assert.equal(supportsMidConversationSystem('claude-sonnet-4-8'), false);
  });

  test('tool-call-id-format: an id off the pattern is remapped in its call and result, the same way every time; valid ids stay', () => {
    const messages = [
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'fc_abc|call_xyz', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'fc_abc_call_xyz', name: 'get_weather', input: { city: 'Rome' } },
          { type: 'tool_use', id: `mcp:server/${'x'.repeat(80)}`, name: 'get_weather', input: { city: 'Oslo' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'fc_abc|call_xyz', content: '18C' },
          { type: 'tool_result', tool_use_id: 'fc_abc_call_xyz', content: '25C' },
          { type: 'tool_result', tool_use_id: `mcp:server/${'x'.repeat(80)}`, content: '3C' },
        ],
      },
    ];
    const found = check(messages).filter((violation) => violation.rule === 'tool-call-id-format');
    assert.equal(found.length, 2);
    for (const violation of found) assert.match(violation.message, matchOf('tool-call-id-format'));
    const first = fix(messages);
    const again = fix(messages);
    assert.deepEqual(first.messages, again.messages, 'the same input, the same ids');
    assert.deepEqual(check(first.messages), []);
    const ids = (first.messages[1] as { content: { id: string }[] }).content.map((block) => block.id);
    const results = (first.messages[2] as { content: { tool_use_id: string }[] }).content.map(
      (block) => block.tool_use_id,
    );
    assert.deepEqual(results, ids, 'each result follows its call');
    assert.equal(ids[1], 'fc_abc_call_xyz', 'a valid id is never rewritten');
    assert.match(ids[0] as string, /^fc_abc_call_xyz_[0-9a-f]+$/, 'taken: suffixed with a hash of the original');
    assert.ok((ids[2] as string).length <= 64);
    assert.match(ids[2] as string, /^mcp_server_x+_[0-9a-f]{8}$/);
  });

  test('thinking-block-not-first: the thinking blocks are moved first, each the same object', () => {
    const thinking = { type: 'thinking', thinking: 'I should call the weather tool.', signature: 'EqQB' };
    const text = { type: 'text', text: 'Let me check.' };
    const call = { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } };
    const messages = [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: [text, thinking, call] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A', content: '18C' }] },
    ];
    const found = check(messages, { thinking: true });
    assert.deepEqual(
      found.map((violation) => violation.rule),
      ['thinking-block-not-first', 'thinking-block-missing'],
      'with thinking on, the loop also lacks its opening thinking block: the same cause',
    );
    assert.match(found[0]?.message ?? '', matchOf('thinking-block-not-first'));
    const content = (fix(messages, { thinking: true }).messages[1] as { content: unknown[] }).content;
    assert.equal(content[0], thinking);
    assert.equal(content[1], text);
    assert.equal(content[2], call);
  });

  test('thinking-final-block: a prefill that ends with thinking loses that block, not edited; emptied, it goes', () => {
    const opening = { type: 'thinking', thinking: 'first', signature: 'EqQA' };
    const thinking = { type: 'thinking', thinking: 'hmm', signature: 'EqQB' };
    const text = { type: 'text', text: 'Well' };
    const messages = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: [opening, text, thinking] },
    ];
    const found = check(messages, { thinking: true });
    assert.deepEqual(
      found.map((violation) => violation.rule),
      ['thinking-final-block'],
    );
    assert.match(found[0]?.message ?? '', matchOf('thinking-final-block'));
    const result = fix(messages, { thinking: true });
    assert.deepEqual(check(result.messages, { thinking: true }), []);
    const content = (result.messages[1] as { content: unknown[] }).content;
    assert.equal(content.length, 2);
    assert.equal(content[0], opening, 'the opening thinking block is the same object');
    assert.equal(content[1], text);
    const only = fix([messages[0], { role: 'assistant', content: [thinking] }], { thinking: true });
    assert.deepEqual(only.messages, [messages[0]]);
  });
});

test('claudeModelOf reads the ids of the API, Bedrock and Vertex, and nothing else', () => {
  const table: [string, { family: string; version: number } | undefined][] = [
    ['claude-sonnet-4-6', { family: 'sonnet', version: 46 }],
    ['claude-opus-4-1-20250805', { family: 'opus', version: 41 }],
    ['claude-sonnet-4-20250514', { family: 'sonnet', version: 40 }],
    ['claude-3-7-sonnet-20250219', { family: 'sonnet', version: 37 }],
    ['claude-3-5-haiku-latest', { family: 'haiku', version: 35 }],
    ['claude-3-opus-20240229', { family: 'opus', version: 30 }],
    ['anthropic.claude-opus-4-6-v1:0', { family: 'opus', version: 46 }],
    ['claude-sonnet-4-6@20260101', { family: 'sonnet', version: 46 }],
    ['claude-opus-5-5', { family: 'opus', version: 55 }],
    ['gpt-4o', undefined],
    ['claude', undefined],
  ];
  for (const [model, expected] of table) assert.deepEqual(claudeModelOf(model), expected, model);
  assert.equal(supportsPrefill(undefined), undefined);
});
