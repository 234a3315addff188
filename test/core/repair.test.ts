import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { check, type Message, repair, SYNTHETIC_RESULT } from '../../src/index.js';

/** One test per strategy: the change kind it reports and the history it produces. */
const call = (id: string, name = 'read_file', args = '{"path":"a"}') => ({
  id,
  type: 'function',
  function: { name, arguments: args },
});
const user = (content: string): Message => ({ role: 'user', content });
const assistantCalls = (...ids: string[]): Message => ({
  role: 'assistant',
  content: null,
  tool_calls: ids.map((id) => call(id)),
});
const result = (id: string, content = `result ${id}`): Message => ({ role: 'tool', tool_call_id: id, content });
const kinds = (messages: Message[], options = {}) => repair(messages, options).changes.map((change) => change.kind);

describe('repair strategies', () => {
  test('a message wedged inside a tool block moves after it, order kept (NexForgeCLI full-sequence repair)', () => {
    const input = [
      user('q'),
      assistantCalls('a', 'b'),
      result('a'),
      user('wedged 1'),
      { role: 'assistant', content: 'ghost' },
      result('b'),
    ];
    const out = repair(input);
    assert.deepEqual(
      out.messages.map((m) => m.role),
      ['user', 'assistant', 'tool', 'tool', 'user', 'assistant'],
    );
    assert.equal(out.messages[4], input[3]);
    assert.equal(out.messages[5], input[4]);
    assert.deepEqual(
      out.changes.map((c) => [c.kind, c.index]),
      [
        ['message-moved', 3],
        ['message-moved', 4],
      ],
    );
  });

  test('a call with no result gets a synthetic error result by default', () => {
    const out = repair([user('q'), assistantCalls('a'), user('next')]);
    assert.deepEqual(out.messages[2], { role: 'tool', tool_call_id: 'a', content: SYNTHETIC_RESULT });
    assert.deepEqual(
      out.changes.map((c) => [c.kind, c.index, c.toolCallId]),
      [['result-synthesized', 1, 'a']],
    );
  });

  test("policy unanswered: 'strip' removes the call and keeps the assistant's text", () => {
    const input: Message[] = [
      user('q'),
      { role: 'assistant', content: 'let me look', tool_calls: [call('a'), call('b')] },
      result('b'),
      user('next'),
    ];
    const out = repair(input, { unanswered: 'strip' });
    assert.deepEqual(out.messages[1], { role: 'assistant', content: 'let me look', tool_calls: [call('b')] });
    assert.deepEqual(kinds(input, { unanswered: 'strip' }), ['call-stripped']);
  });

  test('stripping every call of a contentless assistant drops it, with a change', () => {
    const out = repair([user('q'), assistantCalls('a'), user('next')], { unanswered: 'strip' });
    assert.deepEqual(out.messages, [user('q'), user('next')]);
    assert.deepEqual(
      out.changes.map((c) => c.kind),
      ['call-stripped', 'empty-message-dropped'],
    );
  });

  test('an orphan result becomes a user message saying what it was; or is dropped by policy', () => {
    const input = [user('q'), result('gone', 'the file says hi'), { role: 'assistant', content: 'ok' }];
    const out = repair(input);
    assert.equal(out.messages[1]?.role, 'user');
    assert.match(String(out.messages[1]?.content), /tool_call_id gone[\s\S]*the file says hi/);
    assert.deepEqual(
      out.changes.map((c) => c.kind),
      ['orphan-to-user'],
    );
    const dropped = repair(input, { orphans: 'drop' });
    assert.deepEqual(dropped.messages, [input[0], input[2]]);
    assert.match(dropped.changes[0]?.detail ?? '', /the file says hi/);
  });

  test('an orphan with content parts keeps every part', () => {
    const parts = [
      { type: 'text', text: 'a' },
      { type: 'image_url', image_url: { url: 'data:x' } },
    ];
    const out = repair([user('q'), { role: 'tool', tool_call_id: 'x', content: parts }]);
    assert.deepEqual((out.messages[1]!.content as unknown[]).slice(1), parts);
  });

  test('duplicate results are reduced to one (the first)', () => {
    const input = [user('q'), assistantCalls('a'), result('a', 'first'), result('a', 'second')];
    const out = repair(input);
    assert.deepEqual(out.messages.slice(2), [input[2]]);
    assert.deepEqual(
      out.changes.map((c) => [c.kind, c.index]),
      [['result-duplicate-dropped', 3]],
    );
    assert.match(out.changes[0]?.detail ?? '', /second/);
  });

  test('parallel calls split across consecutive assistant messages are merged back', () => {
    const input = [user('q'), assistantCalls('a'), assistantCalls('b'), result('a'), result('b')];
    const out = repair(input);
    assert.deepEqual(
      out.messages[1]?.tool_calls?.map((c) => c.id),
      ['a', 'b'],
    );
    assert.equal(out.messages.length, 4);
    assert.deepEqual(
      out.changes.map((c) => c.kind),
      ['parallel-calls-merged', 'parallel-calls-merged'],
    );
  });

  test('missing ids: the call and its result share one stable generated id', () => {
    const input: Message[] = [
      user('q'),
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', content: 'r' },
    ];
    const first = repair(input);
    const id = first.messages[1]?.tool_calls?.[0]?.id;
    assert.ok(typeof id === 'string' && id.length > 0);
    assert.equal(first.messages[2]?.tool_call_id, id);
    assert.equal(repair(input).messages[1]?.tool_calls?.[0]?.id, id, 'the same input always gets the same id');
    assert.deepEqual(check(first.messages), []);
  });

  test('empty assistant messages are dropped (content null, no calls)', () => {
    const input: Message[] = [user('q'), { role: 'assistant', content: null }, user('again')];
    assert.deepEqual(repair(input).messages, [input[0], input[2]]);
  });

  test('a user message repeated inside a tool block (crash retries) is kept once when moved', () => {
    const input = [user('fix it'), assistantCalls('a'), user('fix it'), user('fix it'), result('a')];
    const out = repair(input);
    assert.deepEqual(
      out.messages.map((m) => m.role),
      ['user', 'assistant', 'tool', 'user'],
    );
    assert.deepEqual(
      out.changes.map((c) => c.kind),
      ['message-moved', 'user-repeat-collapsed'],
    );
  });

  test('repeated user messages outside a block are valid for OpenAI, and folded at level strongest', () => {
    const input = [user('hi'), user('hi')];
    assert.equal(repair(input).changed, false);
    assert.deepEqual(kinds(input, { level: 'strongest' }), ['user-repeat-collapsed']);
  });

  test('foldRepeatedUserMessages: false keeps every user message, even at level strongest and inside a block', () => {
    const repeated = [user('hi'), user('hi')];
    assert.equal(repair(repeated, { level: 'strongest', foldRepeatedUserMessages: false }).changed, false);
    const wedged = [user('fix it'), assistantCalls('a'), user('fix it'), user('fix it'), result('a')];
    const out = repair(wedged, { foldRepeatedUserMessages: false });
    assert.deepEqual(
      out.messages.map((m) => m.role),
      ['user', 'assistant', 'tool', 'user', 'user'],
    );
    assert.deepEqual(
      out.changes.map((c) => c.kind),
      ['message-moved', 'message-moved'],
    );
  });

  test('tool_calls: [] is removed (corpus 008)', () => {
    const input: Message[] = [user('q'), { role: 'assistant', content: 'blue', tool_calls: [] }];
    assert.deepEqual(repair(input).messages[1], { role: 'assistant', content: 'blue' });
  });

  test('Mistral: ids remapped to nine characters consistently in calls and results', () => {
    const input = [user('q'), assistantCalls('call_0fypS1hVX', 'call_x'), result('call_x'), result('call_0fypS1hVX')];
    const out = repair(input, { profile: 'mistral' });
    const ids = out.messages[1]?.tool_calls?.map((c) => c.id) ?? [];
    assert.ok(ids.every((id) => /^[a-zA-Z0-9]{9}$/.test(id ?? '')));
    assert.equal(out.messages[2]?.tool_call_id, ids[1]);
    assert.equal(out.messages[3]?.tool_call_id, ids[0]);
    assert.deepEqual(check(out.messages, { profile: 'mistral' }), []);
  });

  test('Mistral: a user message right after a tool result gets an assistant bridge (corpus 019)', () => {
    const input = [user('q'), assistantCalls('a1B2c3D4e'), result('a1B2c3D4e'), user('stop this')];
    const out = repair(input, { profile: 'mistral' });
    assert.deepEqual(
      out.messages.map((m) => m.role),
      ['user', 'assistant', 'tool', 'assistant', 'user'],
    );
    assert.deepEqual(
      out.changes.map((c) => c.kind),
      ['assistant-bridge-inserted'],
    );
  });

  test('Qwen: arguments that are not a JSON object become one, the original kept inside', () => {
    const input: Message[] = [
      user('q'),
      { role: 'assistant', content: null, tool_calls: [call('a', 'f', '{"path":"trunc')] },
      result('a'),
    ];
    const out = repair(input, { profile: 'qwen' });
    const args = JSON.parse(out.messages[1]?.tool_calls?.[0]?.function?.arguments ?? '') as Record<string, string>;
    assert.equal(args['unstuck_unparsed_arguments'], '{"path":"trunc');
    assert.deepEqual(
      repair([user('q'), { role: 'assistant', content: null, tool_calls: [call('a', 'f', '')] }, result('a')], {
        profile: 'qwen',
      }).messages[1]?.tool_calls?.[0]?.function?.arguments,
      '{}',
    );
  });

  test("DeepSeek thinking mode: reasoning_content '' added on the tool-call turn (corpus 025)", () => {
    const input: Message[] = [user('q'), { role: 'assistant', content: 'x', tool_calls: [call('a')] }, result('a')];
    const out = repair(input, { profile: 'deepseek' });
    assert.equal(out.messages[1]?.reasoning_content, '');
    assert.deepEqual(repair(input, { profile: 'deepseek', thinking: false }).changes, []);
    assert.deepEqual(repair(input, { profile: 'deepseek', model: 'deepseek-chat' }).changes, []);
  });

  test('a flattened tool call is rebuilt into its function object (corpus 001)', () => {
    const input = [
      user('q'),
      { role: 'assistant', content: 'reading', tool_calls: [{ id: 'c', name: 'ReadDoc', arguments: '{}' }] },
      result('c'),
    ] as Message[];
    const out = repair(input, { profile: 'deepseek', thinking: false });
    assert.deepEqual(out.messages[1]?.tool_calls, [
      { id: 'c', type: 'function', function: { name: 'ReadDoc', arguments: '{}' } },
    ]);
  });

  test("'developer' becomes 'system' for DeepSeek", () => {
    const out = repair([{ role: 'developer', content: 'be brief' }, user('q')], { profile: 'deepseek' });
    assert.equal(out.messages[0]?.role, 'system');
    assert.deepEqual(
      out.changes.map((c) => c.kind),
      ['role-renamed'],
    );
  });

  test('Groq: fields it rejects are removed, each named', () => {
    const out = repair([user('q'), { role: 'assistant', content: 'a', reasoning_content: 'why', id: 'm1' }], {
      profile: 'groq',
    });
    assert.deepEqual(out.messages[1], { role: 'assistant', content: 'a' });
    assert.deepEqual(
      out.changes.map((c) => c.kind),
      ['field-removed', 'field-removed'],
    );
  });

  test('DeepSeek: the same id in two turns is renamed in the later call and its result', () => {
    const input = [
      user('q'),
      assistantCalls('call_0'),
      result('call_0'),
      user('again'),
      assistantCalls('call_0'),
      result('call_0'),
    ];
    assert.deepEqual(
      repair(input, { profile: 'openai' }).changes,
      [],
      'valid for OpenAI-style servers (Ollama reuses call_0)',
    );
    const out = repair(input, { profile: 'deepseek', thinking: false });
    assert.notEqual(out.messages[4]?.tool_calls?.[0]?.id, 'call_0');
    assert.equal(out.messages[5]?.tool_call_id, out.messages[4]?.tool_calls?.[0]?.id);
  });

  test('what repair cannot fix is in remaining, with why', () => {
    const out = repair([user('q'), { role: 'assistant', content: 'answer' }], {
      profile: 'deepseek',
      scope: 'request',
    });
    assert.deepEqual(
      out.remaining.map((r) => r.rule),
      ['ends-with-assistant'],
    );
    assert.match(out.remaining[0]?.why ?? '', /next user message/);
  });

  test('unknown fields are kept verbatim', () => {
    const odd: Message = {
      role: 'assistant',
      content: null,
      tool_calls: [{ ...call('a'), extra: 1 }],
      refusal: null,
      cache_control: { type: 'ephemeral' },
    };
    const out = repair([user('q'), odd, user('next')]);
    assert.equal(out.messages[1], odd);
  });
});
