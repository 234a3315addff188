import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Tool } from '../../src/agent/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import {
  agentFor,
  assertEveryRequestValid,
  assertValidHistory,
  collect,
  echoTool,
  lastEvent,
  recordingStore,
} from './helpers.js';

describe('createAgent: a plain turn', () => {
  test('streams text, ends with stop and usage, and saves user + assistant', async () => {
    const emulator = createEmulator({ script: [{ text: 'Hello there, how can I help?', stream: { chunkSize: 5 } }] });
    const store = recordingStore();
    const agent = agentFor(emulator, { session: store, systemPrompt: 'Be brief.' });
    const events = await collect(agent.runTurn('hi'));
    const text = events.flatMap((event) => (event.type === 'text-delta' ? [event.text] : [])).join('');
    assert.equal(text, 'Hello there, how can I help?');
    assert.ok(events.filter((event) => event.type === 'text-delta').length > 1, 'streamed in pieces');
    const end = lastEvent(events);
    assert.equal(end?.type, 'turn-end');
    assert.equal(end?.type === 'turn-end' && end.reason, 'stop');
    assert.ok(end?.type === 'turn-end' && end.usage !== undefined && end.usage.promptTokens > 0);
    assert.deepEqual(await store.current(), [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello there, how can I help?' },
    ]);
    const sent = emulator.requests[0]?.body;
    assert.equal(sent.stream, true);
    assert.deepEqual(sent.messages[0], { role: 'system', content: 'Be brief.' });
    assert.equal(sent.model, 'deepseek-chat');
    assertEveryRequestValid(emulator);
  });

  test('without streaming the same answer arrives as one delta', async () => {
    const emulator = createEmulator({ script: [{ text: 'whole' }] });
    const agent = agentFor(emulator, { stream: false });
    const events = await collect(agent.runTurn('hi'));
    assert.deepEqual(
      events.filter((event) => event.type === 'text-delta'),
      [{ type: 'text-delta', text: 'whole' }],
    );
    assert.equal(emulator.requests[0]?.body.stream, false);
    assert.equal(agent.messages.at(-1)?.content, 'whole');
  });

  test('the session is saved after every step: user, assistant with calls, results, final answer', async () => {
    const emulator = createEmulator({
      script: [{ toolCalls: [{ name: 'echo', arguments: '{"text":"a"}' }] }, { text: 'done' }],
    });
    const store = recordingStore();
    const agent = agentFor(emulator, { session: store, tools: [echoTool] });
    await collect(agent.runTurn('go'));
    assert.deepEqual(
      store.snapshots.map((snapshot) => snapshot.map((message) => message.role).join(',')),
      ['user', 'user,assistant', 'user,assistant,tool', 'user,assistant,tool,assistant'],
    );
    assertValidHistory(agent.messages);
  });

  test('a second turn while one runs is refused with an error event, not a throw', async () => {
    const emulator = createEmulator({ script: [{ text: 'slow', stream: { chunkSize: 1, delayMs: 20 } }] });
    const agent = agentFor(emulator);
    const first = collect(agent.runTurn('one'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await collect(agent.runTurn('two'));
    assert.equal(second[0]?.type, 'error');
    assert.deepEqual(lastEvent(second), { type: 'turn-end', reason: 'error' });
    assert.equal(lastEvent(await first)?.type, 'turn-end');
  });
});

describe('createAgent: every tool call gets exactly one result', () => {
  const throwing: Tool = {
    name: 'explode',
    description: 'throws',
    parameters: {},
    run: async () => {
      throw new Error('disk on fire');
    },
  };
  // The crash dsh-messages-sanitizer (a DeepSeek Harness plugin) reports: the scheduler reads
  // `.prepare` of something undefined before the tool starts.
  const brokenBeforeStart = { name: 'write', description: 'broken', parameters: {}, run: undefined } as unknown as Tool;

  test('throws, bad arguments, unknown tools and a tool broken before it starts all become error results', async () => {
    const emulator = createEmulator({
      script: [
        {
          toolCalls: [
            { name: 'echo', arguments: '{"text":"fine"}' },
            { name: 'explode', arguments: '{}' },
            { name: 'echo', arguments: '{"text":' },
            { name: 'no_such_tool', arguments: '{}' },
            { name: 'write', arguments: '{}' },
          ],
        },
        { text: 'I see some tools failed.' },
      ],
    });
    const agent = agentFor(emulator, { tools: [echoTool, throwing, brokenBeforeStart] });
    const events = await collect(agent.runTurn('do things'));
    const ends = events.filter((event) => event.type === 'tool-call-end');
    assert.equal(ends.length, 5);
    assert.deepEqual(
      ends.map((event) => event.type === 'tool-call-end' && event.isError),
      [false, true, true, true, true],
    );
    const results = agent.messages
      .filter((message) => message.role === 'tool')
      .map((message) => String(message.content));
    assert.equal(results[0], 'echo: fine');
    assert.match(results[1]!, /^Error: disk on fire/);
    assert.match(results[2]!, /^Error: the arguments are not valid JSON/);
    assert.match(results[3]!, /^Error: unknown tool "no_such_tool" \(available: echo, explode, write\)/);
    assert.match(results[4]!, /^Error: .*not a function/);
    assert.equal(lastEvent(events)?.type === 'turn-end' && (lastEvent(events) as { reason: string }).reason, 'stop');
    // The model saw every result and decided what next.
    assert.equal(
      emulator.requests[1]?.body.messages.filter((message: { role: string }) => message.role === 'tool').length,
      5,
    );
    assertEveryRequestValid(emulator);
    assertValidHistory(agent.messages);
  });

  test('a tool returning a non-string is stringified', async () => {
    const emulator = createEmulator({ script: [{ toolCalls: [{ name: 'object', arguments: '{}' }] }, { text: 'ok' }] });
    const agent = agentFor(emulator, {
      tools: [{ name: 'object', description: '', parameters: {}, run: async () => ({ a: 1 }) as unknown as string }],
    });
    await collect(agent.runTurn('go'));
    assert.equal(agent.messages.find((message) => message.role === 'tool')?.content, '{"a":1}');
  });

  test('tools are offered to the model in the OpenAI function shape', async () => {
    const emulator = createEmulator();
    const agent = agentFor(emulator, { tools: [echoTool] });
    await collect(agent.runTurn('hi'));
    assert.deepEqual(emulator.requests[0]?.body.tools, [
      { type: 'function', function: { name: 'echo', description: 'Echoes its text', parameters: echoTool.parameters } },
    ]);
  });

  test('loop-breaking hints go after the whole tool block, never inside it', async () => {
    const fail: Tool = {
      name: 'flaky',
      description: '',
      parameters: {},
      run: async () => {
        throw new Error('nope');
      },
    };
    const emulator = createEmulator({
      script: [
        { toolCalls: [{ name: 'flaky', arguments: '{}' }] },
        { toolCalls: [{ name: 'flaky', arguments: '{}' }] },
        {
          toolCalls: [
            { name: 'flaky', arguments: '{}' },
            { name: 'echo', arguments: '{"text":"x"}' },
            { name: 'flaky', arguments: '{"again":1}' },
          ],
        },
        { text: 'giving up' },
      ],
    });
    const agent = agentFor(emulator, { tools: [fail, echoTool] });
    await collect(agent.runTurn('try'));
    const roles = agent.messages.map((message) => message.role);
    // user, a, tool, a, tool, a, tool, tool, tool, system(hint), a
    assert.deepEqual(roles, [
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'tool',
      'tool',
      'system',
      'assistant',
    ]);
    assert.match(String(agent.messages[9]?.content), /\[loop guard\] The tool "flaky" failed 3 times/);
    assertEveryRequestValid(emulator);
    assertValidHistory(agent.messages);
  });
});

describe('createAgent: the repair before every request', () => {
  test('a call id the model reuses from an earlier turn is remapped before it is sent (DeepSeek: unique per request)', async () => {
    const emulator = createEmulator({
      profile: 'deepseek',
      script: [
        { toolCalls: [{ id: 'call_same', name: 'echo', arguments: '{"text":"1"}' }] },
        { text: 'first done' },
        { toolCalls: [{ id: 'call_other', name: 'echo', arguments: '{"text":"2"}' }] },
        { toolCalls: [{ id: 'call_same', name: 'echo', arguments: '{"text":"3"}' }] },
        { text: 'second done' },
      ],
    });
    const agent = agentFor(emulator, { tools: [echoTool] });
    await collect(agent.runTurn('one'));
    const events = await collect(agent.runTurn('two'));
    assert.ok(
      events.some((event) => event.type === 'repair' && event.changes.some((change) => change.kind === 'id-remapped')),
    );
    assert.ok(!events.some((event) => event.type === 'retry'), 'fixed before sending, not after a 400');
    assert.ok(emulator.requests.every((request) => request.status === 200));
    assertEveryRequestValid(emulator);
    assertValidHistory(agent.messages);
  });

  test('a history the runner did not build is repaired whole before the first request of a turn', async () => {
    const emulator = createEmulator();
    const store = recordingStore([
      { role: 'user', content: 'q' },
      { role: 'tool', tool_call_id: 'ghost', content: 'a result without its call' },
      { role: 'assistant', content: 'a' },
    ]);
    const agent = agentFor(emulator, { session: store });
    const events = await collect(agent.runTurn('next'));
    assert.equal(events[0]?.type, 'repair');
    assert.ok(events[0]?.type === 'repair' && events[0].changes.some((change) => change.kind === 'orphan-to-user'));
    assertEveryRequestValid(emulator);
    assert.deepEqual(
      (await store.current()).filter((message) => message.role === 'tool'),
      [],
    );
  });
});

describe('createAgent: profiles where a system message may only come first', () => {
  test('loop hints are user messages and a leading system message is sent merged with the prompt', async () => {
    const fail: Tool = {
      name: 'flaky',
      description: '',
      parameters: {},
      run: async () => {
        throw new Error('nope');
      },
    };
    const emulator = createEmulator({
      profile: 'local',
      script: [
        {
          toolCalls: [
            { name: 'flaky', arguments: '{}' },
            { name: 'flaky', arguments: '{}' },
            { name: 'flaky', arguments: '{}' },
          ],
        },
        { text: 'ok' },
      ],
    });
    const store = recordingStore([
      { role: 'system', content: 'saved rules' },
      { role: 'user', content: 'earlier' },
      { role: 'assistant', content: 'yes' },
    ]);
    const agent = agentFor(emulator, { profile: 'local', session: store, tools: [fail], systemPrompt: 'prompt' });
    await collect(agent.runTurn('go'));
    assertEveryRequestValid(emulator);
    assert.equal(emulator.requests[0]?.body.messages[0].content, 'prompt\n\nsaved rules');
    assert.equal(
      emulator.requests[0]?.body.messages.filter((message: { role: string }) => message.role === 'system').length,
      1,
    );
    assert.match(String(agent.messages.find((message) => /loop guard/.test(String(message.content)))?.role), /user/);
  });
});

test('createAgent: an empty message is refused, not added', async () => {
  const emulator = createEmulator();
  const agent = agentFor(emulator);
  const events = await collect(agent.runTurn(''));
  assert.deepEqual(lastEvent(events), { type: 'turn-end', reason: 'error' });
  assert.deepEqual(agent.messages, []);
  assert.equal(emulator.requests.length, 0);
});
