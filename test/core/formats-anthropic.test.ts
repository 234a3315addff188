import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  check as checkItems,
  fromAnthropicMessages,
  type RepairOptions,
  repair,
  SYNTHETIC_RESULT,
  toAnthropicMessages,
} from '../../src/index.js';
import { deepFreeze } from '../support/lossless.js';

/** One test per Anthropic Messages rule: found at its native index, and what the repair makes of it. */
const use = (id: string, input: Record<string, unknown> = { path: 'a.ts' }) => ({
  type: 'tool_use',
  id,
  name: 'read_file',
  input,
});
const result = (id: string, content = 'file body') => ({ type: 'tool_result', tool_use_id: id, content });
const text = (value: string) => ({ type: 'text', text: value });
const check = (input: unknown[], thinking = false) => checkItems(input, { format: 'anthropic-messages', thinking });
const fix = (input: unknown[], options: RepairOptions = {}) =>
  repair(deepFreeze(input), { ...options, format: 'anthropic-messages' });
const rules = (input: unknown[]) => check(input).map((violation) => `${violation.rule}@${violation.index}`);

describe('anthropic-messages converter', () => {
  test('tool_use blocks become tool_calls with the JSON text of input; tool_result blocks become tool messages; origins map back', () => {
    const history = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [text('reading'), use('t1', { path: 'x' })], id: 'msg_1' },
      { role: 'user', content: [result('t1'), text('thanks')] },
    ];
    const { messages, origins } = fromAnthropicMessages(history);
    assert.deepEqual(origins, [0, 1, 2, 2]);
    assert.equal(messages[1]?.tool_calls?.[0]?.function?.arguments, '{"path":"x"}');
    assert.equal(messages[1]?.['id'], 'msg_1', 'unknown fields are kept');
    assert.deepEqual([messages[2]?.role, messages[2]?.tool_call_id, messages[3]?.role], ['tool', 't1', 'user']);
    const back = toAnthropicMessages(messages);
    assert.deepEqual(back, history);
    for (const [index, message] of back.entries()) {
      assert.equal(message, history[index], 'untouched messages come back as the same objects');
    }
  });

  test('a changed call is written back in place among the other blocks', () => {
    const history = [{ role: 'assistant', content: [use('a'), text('between'), use('b')] }];
    const { messages } = fromAnthropicMessages(history);
    const assistant = messages[0]!;
    const changed = {
      ...assistant,
      tool_calls: [assistant.tool_calls![0]!, { ...assistant.tool_calls![1]!, id: 'renamed' }],
    };
    assert.deepEqual(toAnthropicMessages([changed]), [
      { role: 'assistant', content: [use('a'), text('between'), { ...use('b'), id: 'renamed' }] },
    ]);
  });
});

describe('anthropic-messages rules', () => {
  test('valid: the same array back, no changes', () => {
    const history = deepFreeze([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [use('t1')] },
      { role: 'user', content: [result('t1'), text('more')] },
      { role: 'assistant', content: 'done' },
    ]);
    assert.deepEqual(check(history), []);
    const repaired = fix(history);
    assert.equal(repaired.messages, history);
    assert.deepEqual(repaired.changes, []);
  });

  test('tool-calls-unanswered: the next user message lacks the result; an error result leads that message', () => {
    const history = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [use('t1')] },
      { role: 'user', content: 'never mind' },
    ];
    assert.deepEqual(rules(history), ['tool-calls-unanswered@1']);
    const repaired = fix(history);
    assert.deepEqual(repaired.messages[2], {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: SYNTHETIC_RESULT, is_error: true },
        text('never mind'),
      ],
    });
    assert.ok(repaired.changes.some((change) => change.kind === 'result-synthesized' && change.index === 1));
  });

  test('tool-calls-unanswered with unanswered strip: the call goes, and so does the empty assistant message', () => {
    const repaired = fix(
      [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: [use('t1')] },
        { role: 'user', content: 'never mind' },
      ],
      { unanswered: 'strip' },
    );
    assert.deepEqual(repaired.messages, [{ role: 'user', content: [text('q'), text('never mind')] }]);
    assert.deepEqual(repaired.remaining, []);
  });

  test('tool-result-not-first: text before the result is moved after it', () => {
    const history = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [use('t1')] },
      { role: 'user', content: [text('<reminder>'), result('t1')] },
    ];
    assert.deepEqual(rules(history), ['tool-result-not-first@2']);
    assert.deepEqual(fix(history).messages[2], { role: 'user', content: [result('t1'), text('<reminder>')] });
  });

  test('tool-result-orphan: a result after no calls is kept as user text (or dropped)', () => {
    const history = [
      { role: 'user', content: [result('gone', 'old output')] },
      { role: 'assistant', content: 'ok' },
    ];
    assert.deepEqual(rules(history), ['tool-result-orphan@0']);
    const kept = fix(history);
    assert.match(JSON.stringify(kept.messages[0]), /lost its tool call.*old output/);
    assert.deepEqual(
      kept.changes.map((change) => [change.kind, change.index]),
      [['orphan-to-user', 0]],
    );
    const dropped = fix(history, { orphans: 'drop' });
    assert.deepEqual(dropped.messages, [{ role: 'assistant', content: 'ok' }]);
  });

  test('tool-result-id-mismatch: a result naming a call the assistant did not make', () => {
    const history = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [use('t1')] },
      { role: 'user', content: [result('t2')] },
    ];
    assert.deepEqual(rules(history), ['tool-calls-unanswered@1', 'tool-result-id-mismatch@2']);
    assert.deepEqual(check(fix(history).messages), []);
  });

  test('tool-results-split: parallel results in separate user messages are merged into one', () => {
    const history = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [use('a'), use('b')] },
      { role: 'user', content: [result('a')] },
      { role: 'user', content: [result('b')] },
    ];
    assert.deepEqual(rules(history), ['tool-results-split@3', 'roles-not-alternating@3']);
    const repaired = fix(history);
    assert.deepEqual(repaired.messages[2], { role: 'user', content: [result('a'), result('b')] });
    assert.equal(repaired.messages.length, 3);
  });

  test('roles-not-alternating: consecutive same-role messages merged, blocks kept', () => {
    const history = [
      { role: 'user', content: 'one' },
      { role: 'user', content: [text('two'), { type: 'image', source: { type: 'url', url: 'u' } }] },
      { role: 'assistant', content: 'a' },
      { role: 'assistant', content: 'b' },
    ];
    assert.deepEqual(rules(history), ['roles-not-alternating@1', 'roles-not-alternating@3']);
    const repaired = fix(history);
    assert.deepEqual(repaired.messages, [
      { role: 'user', content: [text('one'), text('two'), { type: 'image', source: { type: 'url', url: 'u' } }] },
      { role: 'assistant', content: [text('a'), text('b')] },
    ]);
  });

  test('text-block-empty: empty and blank text blocks dropped, the tool_use kept (corpus 006)', () => {
    const history = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [text(''), text('  '), use('t1')] },
      { role: 'user', content: [result('t1')] },
    ];
    assert.deepEqual(rules(history), ['text-block-empty@1', 'text-block-empty@1']);
    const repaired = fix(history);
    assert.deepEqual(repaired.messages[1], { role: 'assistant', content: [use('t1')] });
    assert.equal(repaired.messages[2], history[2], 'the result message is untouched');
  });

  test('content-empty: an empty message dropped; an empty final assistant (prefill) allowed', () => {
    const history = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [] },
      { role: 'user', content: 'again' },
      { role: 'assistant', content: '' },
    ];
    assert.deepEqual(rules(history), ['content-empty@1']);
    const repaired = fix(history);
    assert.deepEqual(repaired.messages, [
      { role: 'user', content: [text('q'), text('again')] },
      { role: 'assistant', content: '' },
    ]);
  });

  test('tool-call-id-duplicate: a reused tool_use id is renamed in the call and its result', () => {
    const history = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [use('t1')] },
      { role: 'user', content: [result('t1', 'first')] },
      { role: 'assistant', content: [use('t1', { path: 'b' })] },
      { role: 'user', content: [result('t1', 'second')] },
    ];
    assert.deepEqual(rules(history), ['tool-call-id-duplicate@3']);
    const repaired = fix(history);
    const id = (repaired.messages[3] as { content: { id: string }[] }).content[0]?.id;
    assert.notEqual(id, 't1');
    assert.deepEqual((repaired.messages[4] as { content: unknown[] }).content, [
      { ...result('t1', 'second'), tool_use_id: id },
    ]);
    assert.equal(repaired.messages[1], history[1]);
  });

  test('thinking-block-missing: found only with thinking on, and left in remaining with why (a signature cannot be invented)', () => {
    const history = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [text('let me look'), use('t1')] },
      { role: 'user', content: [result('t1')] },
    ];
    assert.deepEqual(check(history), []);
    const violations = check(history, true);
    assert.deepEqual(
      violations.map((violation) => [violation.rule, violation.index]),
      [['thinking-block-missing', 1]],
    );
    assert.match(violations[0]!.message, /Expected `thinking` or `redacted_thinking`, but found `text`/);
    const repaired = fix(history, { thinking: true });
    assert.equal(repaired.changed, false);
    assert.match(repaired.remaining[0]?.why ?? '', /signature/);
    const withThinking = [
      history[0],
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }, use('t1')] },
      history[2],
    ];
    assert.deepEqual(check(withThinking, true), []);
  });

  test('system-role-in-messages stays in remaining; malformed entries are dropped with a change', () => {
    const repaired = fix([{ role: 'system', content: 'be brief' }, 42, { role: 'user', content: 'q' }]);
    assert.deepEqual(
      repaired.changes.map((change) => [change.kind, change.index]),
      [['malformed-dropped', 1]],
    );
    assert.deepEqual(
      repaired.remaining.map((violation) => violation.rule),
      ['system-role-in-messages'],
    );
  });
});

test('merging assistant messages keeps thinking blocks first, as the API requires of a message that has them', () => {
  const thinking = { type: 'thinking', thinking: 'plan', signature: 'sig' };
  const history = [
    { role: 'user', content: 'q' },
    { role: 'assistant', content: 'looking' },
    { role: 'assistant', content: [thinking, use('t1')] },
    { role: 'user', content: [result('t1')] },
  ];
  const repaired = fix(history, { thinking: true });
  assert.deepEqual(repaired.messages[1], { role: 'assistant', content: [thinking, text('looking'), use('t1')] });
  assert.deepEqual(repaired.remaining, []);
});
