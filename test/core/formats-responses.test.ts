import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  check,
  classifyError,
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

/**
 * The other call kinds the client answers (input item shapes from the API reference; Codex's
 * pairing in codex-rs `tool_call_identity`): custom_tool_call, local_shell_call, tool_search_call,
 * and MCP approvals. mcp_call carries its own output.
 */
describe('responses-input rules: custom, local shell, tool search and MCP items', () => {
  const custom = (callId: string, extra: Record<string, unknown> = {}) => ({
    type: 'custom_tool_call',
    call_id: callId,
    name: 'apply_patch',
    input: '*** Begin Patch',
    ...extra,
  });
  const customOutput = (callId: string, value = 'Done!') => ({
    type: 'custom_tool_call_output',
    call_id: callId,
    output: value,
  });
  const shell = (callId: string) => ({
    type: 'local_shell_call',
    id: `lsh_${callId}`,
    call_id: callId,
    status: 'completed',
    action: { type: 'exec', command: ['ls', '-la'], env: {} },
  });
  const search = (callId: string) => ({
    type: 'tool_search_call',
    call_id: callId,
    execution: 'client',
    arguments: { query: 'weather' },
  });
  const searchOutput = (callId: string) => ({
    type: 'tool_search_output',
    call_id: callId,
    execution: 'client',
    tools: [{ type: 'function', name: 'get_weather' }],
  });

  test('valid: each kind answered by its output (a local shell call by a function_call_output, as Codex does, or by a local_shell_call_output); mcp_call alone', () => {
    const input = deepFreeze([
      message('user', 'q'),
      custom('c1'),
      shell('s1'),
      shell('s2'),
      search('t1'),
      customOutput('c1'),
      output('s1'),
      { type: 'local_shell_call_output', id: 's2', output: '{"output":"a.ts"}' },
      searchOutput('t1'),
      { type: 'mcp_call', id: 'mcp_1', server_label: 'docs', name: 'lookup', arguments: '{}', output: 'found' },
      { type: 'mcp_approval_request', id: 'mcpr_1', server_label: 'docs', name: 'lookup', arguments: '{}' },
      { type: 'mcp_approval_response', approval_request_id: 'mcpr_1', approve: true },
      { type: 'tool_search_call', id: 'ts_server', execution: 'server', arguments: {} },
      message('assistant', 'done'),
    ]);
    assert.deepEqual(rules(input), []);
    assert.equal(fix(input).messages, input);
  });

  test('unanswered: the custom tool call worded as the API words it, each answered with its own output kind', () => {
    const input = [message('user', 'q'), custom('c1'), shell('s1'), search('t1'), message('user', 'never mind')];
    const violations = check(input, { format: 'responses-input' });
    assert.deepEqual(
      violations.map((violation) => `${violation.rule}@${violation.index}`),
      ['tool-calls-unanswered@1', 'tool-calls-unanswered@2', 'tool-calls-unanswered@3'],
    );
    assert.equal(violations[0]?.message, 'No tool output found for custom tool call c1.');
    assert.equal(violations[1]?.message, 'No tool output found for function call s1.');
    assert.equal(classifyError(400, violations[0]?.message ?? '')?.rule, 'tool-calls-unanswered');
    const repaired = fix(input);
    assert.deepEqual(repaired.messages.slice(4, 7), [
      { type: 'custom_tool_call_output', call_id: 'c1', output: SYNTHETIC_RESULT },
      { type: 'function_call_output', call_id: 's1', output: SYNTHETIC_RESULT },
      { type: 'tool_search_output', call_id: 't1', execution: 'client', status: 'completed', tools: [] },
    ]);
    assert.deepEqual(rules(repaired.messages), []);
    assert.deepEqual(fix(input, { unanswered: 'strip' }).messages, [input[0], input[4]]);
  });

  test('an output answers only its own kind: a function_call_output for a custom call is an orphan and the call unanswered', () => {
    const input = [message('user', 'q'), custom('c1'), output('c1')];
    assert.deepEqual(rules(input), ['tool-calls-unanswered@1', 'tool-result-orphan@2']);
    const repaired = fix(input);
    assert.deepEqual(rules(repaired.messages), []);
    assert.match(JSON.stringify(repaired.messages), /lost its function call.*temp_c/);
  });

  test('output before its call: moved right after the call (nothing synthesized, nothing turned into text)', () => {
    const input = [message('user', 'q'), customOutput('c1', 'patched'), custom('c1'), message('assistant', 'ok')];
    assert.deepEqual(rules(input), ['tool-result-orphan@1', 'tool-calls-unanswered@2']);
    const repaired = fix(input);
    assert.deepEqual(repaired.messages, [input[0], input[2], input[1], input[3]]);
    assert.deepEqual(
      repaired.changes.map((change) => change.kind),
      ['message-moved'],
    );
    // With an output of its own after it, an earlier output is an orphan (kept as text), not a second answer.
    const answered = [message('user', 'q'), output('a', 'early'), call('a'), output('a', 'late')];
    const kept = fix(answered);
    assert.deepEqual(rules(kept.messages), []);
    assert.deepEqual(kept.messages.slice(2), [answered[2], answered[3]]);
    assert.match(JSON.stringify(kept.messages[1]), /lost its function call.*early/);
  });

  test('duplicates: a reused custom call_id is renamed with its output; a repeated local shell call before its output kept once', () => {
    const reused = [
      message('user', 'q'),
      custom('c1'),
      customOutput('c1'),
      custom('c1', { input: 'other' }),
      customOutput('c1'),
    ];
    assert.deepEqual(rules(reused), ['tool-call-id-duplicate@3', 'tool-result-duplicate@4']);
    const renamed = fix(reused);
    assert.deepEqual(rules(renamed.messages), []);
    assert.equal((renamed.messages[3] as { call_id: string }).call_id, 'c1_2');
    assert.equal((renamed.messages[4] as { call_id: string }).call_id, 'c1_2');
    const repeated = [message('user', 'q'), shell('s1'), shell('s1'), output('s1')];
    assert.deepEqual(rules(repeated), ['tool-call-id-duplicate@2']);
    assert.deepEqual(fix(repeated).messages, [repeated[0], repeated[1], repeated[3]]);
  });

  test('MCP approval: a response without its request is kept as text; a second response for one request dropped', () => {
    const request = {
      type: 'mcp_approval_request',
      id: 'mcpr_1',
      server_label: 'docs',
      name: 'lookup',
      arguments: '{}',
    };
    const response = { type: 'mcp_approval_response', approval_request_id: 'mcpr_1', approve: true };
    assert.deepEqual(rules([message('user', 'q'), response]), ['tool-result-orphan@1']);
    const text = fix([message('user', 'q'), response]);
    assert.match(JSON.stringify(text.messages[1]), /MCP approval response below lost its approval request.*approve/);
    const twice = [message('user', 'q'), request, response, { ...response, approve: false }];
    assert.deepEqual(rules(twice), ['tool-result-duplicate@3']);
    assert.deepEqual(fix(twice).messages, twice.slice(0, 3));
  });

  test('opaque items stay as they came and reasoning stays with its call: compaction and encrypted reasoning before a custom call', () => {
    const compaction = { type: 'compaction', id: 'cmp_1', encrypted_content: 'gAAAA-opaque' };
    const input = deepFreeze([
      compaction,
      message('user', 'q'),
      reasoning('rs_1'),
      custom('c1'),
      message('user', 'next'),
    ]);
    const repaired = fix(input);
    assert.equal(repaired.messages[0], input[0]);
    assert.equal(repaired.messages[2], input[2]);
    assert.equal(repaired.messages[3], input[3]);
    assert.deepEqual(rules(repaired.messages), []);
  });
});

describe('responses-input rules the request decides: its model and its endpoint', () => {
  const serverCall = (callId: string) => call(callId, { id: `fc_${callId}` });
  const withModel = (input: unknown[], options: RepairOptions) =>
    check(input, { format: 'responses-input', ...options }).map((violation) => `${violation.rule}@${violation.index}`);

  test('reasoning-item-missing: at the heal (level strongest), a server-id item without its reasoning item; the id dropped, the content kept', () => {
    const input = deepFreeze([message('user', 'q'), serverCall('a'), output('a'), message('assistant', 'done')]);
    const strongest = { level: 'strongest' as const };
    assert.deepEqual(withModel(input, { model: 'gpt-5', ...strongest }), ['reasoning-item-missing@1']);
    assert.match(
      check(input, { format: 'responses-input', model: 'o3', ...strongest })[0]?.message ?? '',
      /^Item 'fc_a' of type 'function_call' was provided without its required 'reasoning' item/,
    );
    // A model not read is taken as a reasoning one there (the API named the rule); a chat model never.
    assert.deepEqual(withModel(input, { model: 'my-gateway-alias', ...strongest }), ['reasoning-item-missing@1']);
    for (const model of ['gpt-4o', 'gpt-4.1-mini', 'gpt-5-chat-latest'])
      assert.deepEqual(withModel(input, { model, ...strongest }), [], model);
    // The first pass leaves it: the request may be valid (only the API's store knows how the item was produced).
    assert.deepEqual(withModel(input, { model: 'gpt-5' }), []);
    assert.equal(fix(input, { model: 'gpt-5' }).messages, input);
    const repaired = fix(input, { model: 'gpt-5', ...strongest });
    const { id: _id, ...withoutId } = input[1] as Record<string, unknown>;
    assert.deepEqual(repaired.messages, [input[0], withoutId, input[2], input[3]]);
    assert.deepEqual(
      repaired.changes.map((change) => change.kind),
      ['field-removed'],
    );
  });

  test('reasoning-item-missing: the reasoning item anywhere earlier in the same model turn is enough (parallel calls, a message then calls)', () => {
    const msg = { type: 'message', id: 'msg_1', role: 'assistant', content: [{ type: 'output_text', text: 'on it' }] };
    const input = deepFreeze([
      message('user', 'q'),
      reasoning('rs_1'),
      msg,
      serverCall('a'),
      serverCall('b'),
      output('a'),
      output('b'),
      serverCall('c'),
      output('c'),
    ]);
    const options = { model: 'gpt-5-codex', level: 'strongest' as const };
    assert.deepEqual(withModel(input, options), ['reasoning-item-missing@7']);
    assert.deepEqual(withModel(input.slice(0, 7), options), []);
  });

  test('system-role-unsupported: only where the request goes to the ChatGPT Codex backend; there sent as a developer message', () => {
    const input = deepFreeze([message('system', 'Be terse.'), message('user', 'Hi')]);
    assert.deepEqual(withModel(input, {}), []);
    assert.deepEqual(withModel(input, { endpoint: 'chatgpt-codex' }), ['system-role-unsupported@0']);
    const repaired = fix(input, { endpoint: 'chatgpt-codex' });
    assert.deepEqual(repaired.messages, [{ ...message('system', 'Be terse.'), role: 'developer' }, input[1]]);
    assert.equal(repaired.messages[1], input[1]);
    assert.deepEqual(
      repaired.changes.map((change) => change.kind),
      ['role-renamed'],
    );
  });
});
