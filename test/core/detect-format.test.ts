import assert from 'node:assert/strict';
import { test } from 'node:test';
import { detectFormat } from '../../src/index.js';

const toolUse = { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read', input: {} }] };

test('an array: each format by what its elements carry', () => {
  assert.equal(detectFormat([{ role: 'user', content: 'hi' }]), 'openai-chat');
  assert.equal(
    detectFormat([{ role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: {} }] }]),
    'openai-chat',
  );
  assert.equal(detectFormat([{ role: 'user', content: 'read it' }, toolUse]), 'anthropic-messages');
  assert.equal(detectFormat([{ role: 'user', parts: [{ text: 'hi' }] }]), 'gemini-contents');
  assert.equal(
    detectFormat([{ type: 'function_call', call_id: 'c', name: 'read', arguments: '{}' }]),
    'responses-input',
  );
});

test('a request body: by its history key, and Anthropic by a top-level system', () => {
  assert.equal(detectFormat({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }), 'openai-chat');
  assert.equal(detectFormat({ system: 'be brief', messages: [{ role: 'user', content: 'hi' }] }), 'anthropic-messages');
  assert.equal(detectFormat({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }), 'gemini-contents');
  assert.equal(
    detectFormat({
      input: [
        { role: 'user', content: 'hi' },
        { type: 'message', role: 'assistant', content: 'ok' },
      ],
    }),
    'responses-input',
  );
});

test('what it does not recognise is not called one of the formats', () => {
  for (const value of [
    [],
    [1, 'two', null],
    [{ foo: 1 }],
    [{ role: 'user', content: 'hi' }, { note: 'not a message' }],
    { messages: [] },
    // An empty history under a body key is no evidence either: `input` is also an embeddings or moderation body's.
    { contents: [] },
    { input: [] },
    { model: 'text-embedding-3-small', input: ['a', 'b'] },
    { messages: [{ text: 'no role' }] },
    { prompt: 'hello' },
    { messages: 'not an array' },
    'a string',
    42,
    null,
    undefined,
  ])
    assert.equal(detectFormat(value), undefined, JSON.stringify(value));
});
