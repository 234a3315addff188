import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestBody } from '../../src/agent/request-body.js';
import { resolveAgentOptions } from '../../src/agent/resolve-agent-options.js';
import type { Message } from '../../src/core/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import { agentFor, collect, echoTool } from './helpers.js';

const messages: Message[] = [{ role: 'user', content: 'hi' }];

test('requestBody: model, messages as given, streaming with usage, tools when given, the thinking field when chosen', () => {
  const config = resolveAgentOptions({
    baseURL: 'http://127.0.0.1:9/v1',
    apiKey: 'sk-test',
    model: 'deepseek-chat',
    profile: 'deepseek',
    thinking: true,
    tools: [echoTool],
  });
  assert.deepEqual(requestBody(config, messages, config.wireTools), {
    model: 'deepseek-chat',
    messages,
    stream: true,
    stream_options: { include_usage: true },
    tools: config.wireTools,
    thinking: { type: 'enabled' },
  });
  assert.deepEqual(requestBody({ ...config, stream: false, thinkingField: undefined }, messages), {
    model: 'deepseek-chat',
    messages,
    stream: false,
  });
});

test("a compaction's summarizing request has the turn's settings but no tools and no system prompt of the runner", async () => {
  const emulator = createEmulator({
    script: [{ text: 'one '.repeat(100) }, { text: 'two' }, { text: 'the summary' }],
  });
  const agent = agentFor(emulator, {
    thinking: false,
    tools: [echoTool],
    systemPrompt: 'the runner prompt',
    stream: false,
  });
  await collect(agent.runTurn('first question '.repeat(50)));
  await collect(agent.runTurn('second question'));
  const events = await collect(agent.compact!());
  assert.ok(
    events.some((event) => event.type === 'compaction-end'),
    JSON.stringify(events),
  );
  const turn = emulator.requests[0]?.body;
  const summary = emulator.requests.at(-1)?.body;
  assert.deepEqual(turn.thinking, { type: 'disabled' });
  assert.equal(turn.messages[0].content, 'the runner prompt');
  assert.deepEqual(
    { model: summary.model, stream: summary.stream, thinking: summary.thinking, tools: summary.tools },
    { model: 'deepseek-chat', stream: false, thinking: { type: 'disabled' }, tools: undefined },
  );
  assert.doesNotMatch(JSON.stringify(summary.messages), /the runner prompt/);
});
