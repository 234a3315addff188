import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AgentOptions } from '../../src/agent/index.js';
import { AGENT_DEFAULTS, resolveAgentOptions } from '../../src/agent/resolve-agent-options.js';
import { createMemoryStore } from '../../src/session/index.js';
import { echoTool } from './helpers.js';

const base: AgentOptions = { baseURL: 'http://127.0.0.1:9/v1//', apiKey: 'sk-test', model: 'gpt-4o' };

test('resolveAgentOptions: every default, decided once', async () => {
  const config = resolveAgentOptions(base);
  assert.equal(config.profile, 'openai');
  assert.equal(config.thinking, false);
  assert.equal(config.thinkingField, undefined);
  assert.equal(config.stream, true);
  assert.equal(config.request.url, 'http://127.0.0.1:9/v1/chat/completions');
  assert.equal(config.request.fetch, globalThis.fetch);
  assert.deepEqual(config.request.retry, {
    maxRetries: AGENT_DEFAULTS.maxRetries,
    baseDelayMs: AGENT_DEFAULTS.baseDelayMs,
    maxDelayMs: AGENT_DEFAULTS.maxDelayMs,
  });
  assert.equal(config.request.idleTimeoutMs, 120_000);
  assert.equal(config.maxSteps, 64);
  assert.equal(config.hintAfterFailures, 3);
  assert.equal(config.hintRole, 'system');
  assert.equal(config.wireTools, undefined);
  assert.equal(config.fixedChars, 0);
  assert.deepEqual(await config.store.load(), { messages: [], problems: [] }, 'an in-memory session');
  assert.equal(config.contextWindow, 128_000);
  assert.equal(config.reserveTokens, 8192);
  assert.equal(config.fitToWindow, false);
  assert.deepEqual(config.compaction, { auto: false, threshold: 0.75, options: {} });
});

test('resolveAgentOptions: the default pause is cut short by an abort', async () => {
  const controller = new AbortController();
  const pause = resolveAgentOptions(base).request.sleep(60_000, controller.signal);
  controller.abort();
  await assert.rejects(pause, { name: 'AbortError' });
});

test('resolveAgentOptions: what follows from the profile, the tools and the window', () => {
  const store = createMemoryStore();
  const config = resolveAgentOptions({
    ...base,
    profile: 'anthropic',
    tools: [echoTool],
    systemPrompt: 'be brief',
    session: store,
    contextWindow: 20_000,
    compaction: { threshold: 0.5 },
  });
  assert.equal(config.systemFirstOnly, true);
  assert.equal(config.hintRole, 'user', 'where a system message may only come first, a hint is a user message');
  assert.deepEqual(config.wireTools, [
    {
      type: 'function',
      function: { name: 'echo', description: echoTool.description, parameters: echoTool.parameters },
    },
  ]);
  assert.equal(config.tools.get('echo'), echoTool);
  assert.equal(config.fixedChars, 'be brief'.length + JSON.stringify(config.wireTools).length);
  assert.equal(config.store, store, 'the option `session` is the store');
  assert.equal(config.reserveTokens, 5_000, 'a quarter of a small window');
  assert.equal(config.fitToWindow, true);
  assert.deepEqual(config.compaction, { auto: true, threshold: 0.5, options: { threshold: 0.5 } });
  assert.equal(resolveAgentOptions({ ...base, contextWindow: 20_000, compaction: false }).compaction.auto, false);
  assert.equal(resolveAgentOptions({ ...base, profile: 'local' }).compaction.threshold, 0.6);
});

test("resolveAgentOptions: DeepSeek's thinking field is sent only when the caller chose a mode", () => {
  assert.equal(resolveAgentOptions({ ...base, profile: 'deepseek', model: 'deepseek-reasoner' }).thinking, true);
  assert.equal(
    resolveAgentOptions({ ...base, profile: 'deepseek', model: 'deepseek-reasoner' }).thinkingField,
    undefined,
  );
  assert.deepEqual(resolveAgentOptions({ ...base, profile: 'deepseek', thinking: false }).thinkingField, {
    type: 'disabled',
  });
  assert.deepEqual(resolveAgentOptions({ ...base, profile: 'deepseek', thinking: true }).thinkingField, {
    type: 'enabled',
  });
  assert.equal(resolveAgentOptions({ ...base, profile: 'moonshot', thinking: true }).thinkingField, undefined);
});
