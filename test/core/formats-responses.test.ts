import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  check,
  fromResponsesInput,
  type RepairOptions,
  repair,
  SYNTHETIC_RESULT,
  toResponsesInput,
} from '../../src/index.js';
import { deepFreeze } from '../support/lossless.js';

/** One test per Responses input rule: found at its native index, and what the repair makes of it. */
const message = (role: string, content: unknown) => ({ type: 'message', role, content });
const call = (callId: string, extra: Record<string, unknown> = {}) => ({
  type: 'function_call',
  call_id: callId,
  name: 'get_weather',
  arguments: '{"city":"Paris"}',
  ...extra,
});
const output = (callId: string, value = '{"temp_c":18}') => ({
  type: 'function_call_output',
  call_id: callId,
  output: value,
});
const reasoning = (id: string) => ({ type: 'reasoning', id, summary: [], encrypted_content: 'gAAA' });
const rules = (input: unknown[]) =>
  check(input, { format: 'responses-input' }).map((violation) => `${violation.rule}@${violation.index}`);
const fix = (input: unknown[], options: RepairOptions = {}) =>
  repair(deepFreeze(input), { ...options, format: 'responses-input' });

describe('responses-input converter', () => {
  test('a run of function_call items is one assistant message; outputs are tool messages; other items ride along verbatim', () => {
    const input = [
      { role: 'user', content: 'q' },
      reasoning('rs_1'),
      call('a'),
      call('b', { id: 'fc_b' }),
      output('b'),
      output('a'),
      message('assistant', [{ type: 'output_text', text: 'done' }]),
    ];
    const { messages, origins } = fromResponsesInput(input);
    assert.deepEqual(origins, [0, 1, 2, 4, 5, 6]);
    assert.deepEqual(
      messages.map((m) => m.role),
      ['user', 'item:reasoning', 'assistant', 'tool', 'tool', 'assistant'],
    );
    assert.deepEqual(
      messages[2]?.tool_calls?.map((c) => c.id),
      ['a', 'b'],
    );
    const back = toResponsesInput(messages);
    assert.deepEqual(back, input);
    for (const [index, item] of back.entries()) assert.equal(item, input[index]);
  });
});

describe('responses-input rules', () => {
  test('valid: outputs may come anywhere after their call; the same array back', () => {
    const input = deepFreeze([
      message('user', 'q'),
      reasoning('rs_1'),
      call('a'),
      message('user', 'meanwhile'),
      output('a'),
      message('assistant', 'done'),
    ]);
    assert.deepEqual(rules(input), []);
    assert.equal(fix(input).messages, input);
  });

  test('tool-calls-unanswered: an error output right after the run of calls (or the call stripped)', () => {
    const input = [message('user', 'q'), call('a'), call('b'), output('b'), message('user', 'never mind')];
    assert.deepEqual(rules(input), ['tool-calls-unanswered@1']);
    const repaired = fix(input);
    assert.deepEqual(repaired.messages.slice(1, 4), [
      input[1],
      input[2],
      { type: 'function_call_output', call_id: 'a', output: SYNTHETIC_RESULT },
    ]);
    assert.deepEqual(fix(input, { unanswered: 'strip' }).messages, [input[0], input[2], input[3], input[4]]);
  });

  test('tool-result-orphan: an output whose call is gone becomes a user message (or is dropped)', () => {
    const input = [message('user', 'q'), output('gone', 'old output')];
    assert.deepEqual(rules(input), ['tool-result-orphan@1']);
    const repaired = fix(input);
    assert.deepEqual(repaired.messages[1], {
      type: 'message',
      role: 'user',
      content:
        '[unstuck: the tool output below (call_id gone) lost its function call, so it is kept as text]\nold output',
    });
    assert.deepEqual(fix(input, { orphans: 'drop' }).messages, [input[0]]);
  });

  test('tool-call-id-duplicate: the same function_call item twice before its output keeps one copy (corpus 044)', () => {
    const input = [message('user', 'q'), call('c1', { id: 'fc_1' }), call('c1', { id: 'fc_1' }), output('c1')];
    assert.deepEqual(rules(input), ['tool-call-id-duplicate@2']);
    const repaired = fix(input);
    assert.deepEqual(repaired.messages, [input[0], input[1], input[3]]);
    assert.deepEqual(
      repaired.changes.map((change) => [change.kind, change.index]),
      [['item-dropped', 2]],
    );
  });

  test('tool-call-id-duplicate: a different call reusing a call_id is renamed with the output that answers it', () => {
    const input = [
      message('user', 'q'),
      call('c1'),
      output('c1', 'first'),
      call('c1', { arguments: '{"city":"Rome"}' }),
      output('c1', 'second'),
    ];
    assert.deepEqual(rules(input), ['tool-call-id-duplicate@3', 'tool-result-duplicate@4']);
    const repaired = fix(input);
    assert.deepEqual(rules(repaired.messages), []);
    assert.deepEqual(repaired.messages.slice(3), [
      { ...call('c1', { arguments: '{"city":"Rome"}' }), call_id: 'c1_2' },
      { ...output('c1', 'second'), call_id: 'c1_2' },
    ]);
  });

  test('reasoning-item-orphan: a reasoning item with nothing it produced after it is dropped', () => {
    const input = [
      message('user', 'q'),
      reasoning('rs_1'),
      message('user', 'continue'),
      reasoning('rs_2'),
      call('a'),
      output('a'),
    ];
    assert.deepEqual(rules(input), ['reasoning-item-orphan@1']);
    const repaired = fix(input);
    assert.deepEqual(repaired.messages, [input[0], input[2], input[3], input[4], input[5]]);
    assert.match(repaired.changes[0]?.detail ?? '', /rs_1/);
  });

  test('stripping a call leaves its reasoning dangling: that goes too', () => {
    const repaired = fix([message('user', 'q'), reasoning('rs_1'), call('a')], { unanswered: 'strip' });
    assert.deepEqual(repaired.messages, [message('user', 'q')]);
    assert.deepEqual(repaired.remaining, []);
  });

  test('tool-call-id-missing: a call without call_id gets one (and an error output); an output without one is kept as text', () => {
    const input = [
      message('user', 'q'),
      { type: 'function_call', name: 'f', arguments: '{}' },
      { type: 'function_call_output', output: 'lost' },
    ];
    assert.deepEqual(rules(input), ['tool-call-id-missing@1', 'tool-call-id-missing@2']);
    const repaired = fix(input);
    assert.deepEqual(rules(repaired.messages), []);
    assert.deepEqual(repaired.messages.slice(1, 3), [
      { ...input[1], call_id: 'call_unstuck_1' },
      { type: 'function_call_output', call_id: 'call_unstuck_1', output: SYNTHETIC_RESULT },
    ]);
    assert.match(JSON.stringify(repaired.messages[3]), /lost its function call.*lost/);
  });
});
