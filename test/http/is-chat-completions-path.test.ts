import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isChatCompletionsPath } from '../../src/http/is-chat-completions-path.js';

test('chat-completions endpoints under any base path are recognised', () => {
  for (const url of [
    'https://api.openai.com/v1/chat/completions',
    'https://api.deepseek.com/chat/completions',
    'https://dashscope.aliyuncs.com/compatible-mode/v1/chat/completions',
    '/v1/chat/completions/',
    'http://127.0.0.1:9/chat/completions?x=1',
  ]) {
    assert.equal(isChatCompletionsPath(url), true, url);
  }
});

test('other endpoints are not', () => {
  for (const url of [
    'https://api.openai.com/v1/completions',
    'https://api.openai.com/v1/models',
    '/v1/chat/completions/abc',
    '/v1/responses',
    'not a url',
  ]) {
    assert.equal(isChatCompletionsPath(url), false, url);
  }
});
