import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  check,
  fromGeminiContents,
  type RepairOptions,
  repair,
  SYNTHETIC_RESULT,
  toGeminiContents,
} from '../../src/index.js';
import { deepFreeze } from '../support/lossless.js';

/** One test per Gemini contents rule: found at its native index, and what the repair makes of it. */
const user = (...parts: unknown[]) => ({ role: 'user', parts });
const model = (...parts: unknown[]) => ({ role: 'model', parts });
const call = (name: string, args: Record<string, unknown> = {}, id?: string) => ({
  functionCall: { ...(id === undefined ? {} : { id }), name, args },
});
const response = (name: string, value: unknown = { output: 'ok' }, id?: string) => ({
  functionResponse: { ...(id === undefined ? {} : { id }), name, response: value },
});
const rules = (input: unknown[]) =>
  check(input, { format: 'gemini-contents' }).map((violation) => `${violation.rule}@${violation.index}`);
const fix = (input: unknown[], options: RepairOptions = {}) =>
  repair(deepFreeze(input), { ...options, format: 'gemini-contents' });

describe('gemini-contents converter', () => {
  test('calls without ids pair with their responses by name and order; the ids made up are never written back', () => {
    const history = [
      user({ text: 'q' }),
      model({ text: 'thinking', thought: true }, call('a', { n: 1 }), call('b')),
      user(response('b'), response('a')),
    ];
    const { messages, origins } = fromGeminiContents(history);
    assert.deepEqual(origins, [0, 1, 2, 2]);
    const [first, second] = messages[1]?.tool_calls ?? [];
    assert.equal(first?.function?.arguments, '{"n":1}');
    assert.deepEqual([messages[2]?.tool_call_id, messages[3]?.tool_call_id], [second?.id, first?.id]);
    const back = toGeminiContents(messages);
    assert.deepEqual(back, history);
    for (const [index, content] of back.entries()) assert.equal(content, history[index]);
  });

  test('snake_case parts (the Python SDK) are read and written back as they came', () => {
    const history = [
      user({ text: 'q' }),
      model({ function_call: { name: 'f', args: {} } }),
      user({ function_response: { name: 'f', response: {} } }),
    ];
    assert.deepEqual(check(history, { format: 'gemini-contents' }), []);
    assert.deepEqual(toGeminiContents(fromGeminiContents(history).messages), history);
  });
});

describe('gemini-contents rules', () => {
  test('valid: the same array back, no changes', () => {
    const history = deepFreeze([
      user({ text: 'q' }),
      model(call('f')),
      user(response('f')),
      model({ text: 'done' }),
      user({ text: 'next' }),
      user({ text: 'more' }),
    ]);
    assert.deepEqual(rules(history), []);
    assert.equal(fix(history).messages, history);
  });

  test('tool-call-turn-position: a call turn after a model turn is merged into it', () => {
    const history = [user({ text: 'q' }), model({ text: 'let me look' }), model(call('f')), user(response('f'))];
    assert.deepEqual(rules(history), ['tool-call-turn-position@2']);
    const repaired = fix(history);
    assert.deepEqual(repaired.messages, [
      user({ text: 'q' }),
      model({ text: 'let me look' }, call('f')),
      user(response('f')),
    ]);
  });

  test('tool-call-turn-position: a call turn opening the contents is kept as user text, its responses as orphans (corpus 029)', () => {
    const history = [model(call('f', { x: 1 })), user(response('f', { output: 'found' })), user({ text: 'go on' })];
    assert.deepEqual(rules(history), ['tool-call-turn-position@0']);
    const repaired = fix(history);
    assert.deepEqual(rules(repaired.messages), []);
    assert.match(JSON.stringify(repaired.messages), /f\(\{\\"x\\":1\}\).*found/);
    assert.deepEqual(
      repaired.changes.map((change) => [change.kind, change.index]),
      [
        ['call-to-text', 0],
        ['orphan-to-user', 1],
      ],
    );
  });

  test('tool-result-orphan: a response turn after no call turn is kept as user text (or dropped)', () => {
    const history = [
      user(response('read_file', { output: 'def f()' }, 'call_001')),
      model({ text: 'ok' }),
      user({ text: 'q' }),
    ];
    assert.deepEqual(rules(history), ['tool-result-orphan@0']);
    assert.match(JSON.stringify(fix(history).messages[0]), /lost its tool call.*def f/);
    assert.deepEqual(fix(history, { orphans: 'drop' }).messages, [model({ text: 'ok' }), user({ text: 'q' })]);
  });

  test('tool-calls-unanswered: fewer responses than calls; an error response is added', () => {
    const history = [user({ text: 'q' }), model(call('a'), call('b')), user(response('a'))];
    assert.deepEqual(rules(history), ['tool-calls-unanswered@1']);
    const repaired = fix(history);
    assert.deepEqual(
      repaired.messages[2],
      user(response('a'), { functionResponse: { name: 'b', response: { error: SYNTHETIC_RESULT } } }),
    );
    assert.equal(repaired.messages[1], history[1]);
  });

  test('tool-calls-unanswered: text wedged between a call and its response is moved after it (corpus 031)', () => {
    const history = [
      user({ text: 'q' }),
      model(call('f', {}, 'c1')),
      user({ text: '<instruction>' }),
      user(response('f', {}, 'c1')),
    ];
    assert.deepEqual(rules(history), ['tool-calls-unanswered@1', 'tool-result-orphan@3']);
    const repaired = fix(history);
    assert.deepEqual(repaired.messages, [history[0], history[1], history[3], history[2]]);
  });

  test('tool-results-excess: a response no call asked for is kept as text', () => {
    const history = [user({ text: 'q' }), model(call('f')), user(response('f', { t: 1 }), response('f', { t: 2 }))];
    assert.deepEqual(rules(history), ['tool-results-excess@2']);
    const repaired = fix(history);
    assert.deepEqual(rules(repaired.messages), []);
    const parts = (repaired.messages[2] as { parts: unknown[] }).parts;
    assert.deepEqual(parts[0], response('f', { t: 1 }));
    assert.match(JSON.stringify(parts[1]), /lost its tool call.*\{\\"t\\":2\}/);
  });

  test('content-empty and text-block-empty: empty parts and turns dropped, a thought signature kept', () => {
    const history = [
      user({ text: 'q' }),
      model({ text: '' }, { text: 'a' }),
      model(),
      user({}, { text: 'b' }),
      model({ text: '', thoughtSignature: 'sig' }, { text: 'c' }),
    ];
    assert.deepEqual(rules(history), ['text-block-empty@1', 'content-empty@2', 'content-empty@3']);
    assert.deepEqual(fix(history).messages, [
      user({ text: 'q' }),
      model({ text: 'a' }),
      user({ text: 'b' }),
      history[4],
    ]);
  });

  test('role-unknown: assistant and tool roles mapped to model and user; system left with why', () => {
    const history = [
      user({ text: 'q' }),
      { role: 'assistant', parts: [{ text: 'hi' }] },
      { role: 'system', parts: [{ text: 'rules' }] },
    ];
    assert.deepEqual(rules(history), ['role-unknown@1', 'role-unknown@2']);
    const repaired = fix(history);
    assert.deepEqual(repaired.messages[1], model({ text: 'hi' }));
    assert.deepEqual(
      repaired.remaining.map((violation) => [violation.rule, violation.index]),
      [['role-unknown', 2]],
    );
    assert.match(repaired.remaining[0]?.why ?? '', /systemInstruction/);
  });
});

describe('gemini-contents ends-with-assistant, by the model in the path', () => {
  const prefill = deepFreeze([user({ text: 'Hi' }), model({ text: 'Hello! How can I' })]);
  const found = (modelId: string | undefined) =>
    check(prefill, { format: 'gemini-contents', ...(modelId === undefined ? {} : { model: modelId }) }).map(
      (violation) => violation.message,
    );

  test('3.x after 3.1 (and later generations) refuse a final model turn; 2.x, 3.0, 3.1, 1.5 and the -latest aliases take it as a prefill', () => {
    for (const id of ['gemini-3.8-flash', 'gemini-3.7-pro', 'models/gemini-3.2-flash-lite', 'gemini-4-pro'])
      assert.deepEqual(found(id), ['Requests ending with a model turn are not supported.'], id);
    for (const id of [
      'gemini-2.5-pro',
      'gemini-2.0-flash',
      'gemini-3-pro-preview',
      'gemini-3.1-pro',
      'gemini-1.5-pro',
      'gemini-pro-latest',
    ])
      assert.deepEqual(found(id), [], id);
    assert.deepEqual(found('gemini-1.0-pro'), [
      'Please ensure that multiturn requests ends with a user role or a function response.',
    ]);
    // An id this does not read decides nothing.
    for (const id of [undefined, 'tunedModels/my-model-123', 'learnlm-2.0-flash']) assert.deepEqual(found(id), [], id);
    // A final call turn is not a prefill (its own rule, unanswered, says what is wrong).
    assert.deepEqual(
      check([user({ text: 'q' }), model(call('f'))], { format: 'gemini-contents', model: 'gemini-3.8-flash' }).map(
        (violation) => violation.rule,
      ),
      ['tool-calls-unanswered'],
    );
  });

  test('the prefill is dropped at level strongest only (it is what the caller wrote), as for Anthropic', () => {
    const lax = fix(prefill, { model: 'gemini-3.8-flash' });
    assert.equal(lax.changed, false);
    assert.deepEqual(
      lax.remaining.map((left) => left.rule),
      ['ends-with-assistant'],
    );
    const strong = fix(prefill, { model: 'gemini-3.8-flash', level: 'strongest' });
    assert.deepEqual(strong.messages, [prefill[0]]);
    assert.deepEqual(
      strong.changes.map((change) => `${change.kind}@${change.index}`),
      ['prefill-dropped@1'],
    );
    assert.deepEqual(strong.remaining, []);
    assert.equal(fix(prefill, { model: 'gemini-2.5-pro', level: 'strongest' }).messages, prefill);
  });
});
