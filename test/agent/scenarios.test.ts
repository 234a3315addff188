/**
 * The failure chains that NexForgeCLI 0.4.1 (a terminal agent for DeepSeek, `nexforge-cli` on PyPI)
 * and dsh-messages-sanitizer (a DeepSeek Harness plugin) record,
 * each played against the strict emulator and each ending with a valid history and a successful
 * next turn. The retry after a network failure (no duplicate user message) is in retries.test.ts,
 * with the other transient failures and the pairing-400 heal.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { AgentEvent, Tool } from '../../src/agent/index.js';
import type { Message } from '../../src/core/index.js';
import { check } from '../../src/core/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import { createJournalStore, createTranscriptStore, formatTranscript } from '../../src/session/index.js';
import { buildPoisonedSession, POISONED_INDEX, POISONED_LENGTH } from '../chat/fixtures/poisoned-session.js';
import {
  agentFor,
  assertEveryRequestValid,
  assertValidHistory,
  collect,
  echoTool,
  lastEvent,
  recordingStore,
  userTexts,
} from './helpers.js';

function reason(events: readonly AgentEvent[]): string | undefined {
  const end = lastEvent(events);
  return end?.type === 'turn-end' ? end.reason : undefined;
}

async function nextTurnSucceeds(
  agent: ReturnType<typeof agentFor>,
  emulator: ReturnType<typeof createEmulator>,
  profile: 'deepseek' | 'openai' = 'deepseek',
  model = 'deepseek-chat',
): Promise<void> {
  emulator.push({ text: 'next turn works' });
  const events = await collect(agent.runTurn('are we good?'));
  assert.equal(reason(events), 'stop', JSON.stringify(events.filter((event) => event.type === 'error')));
  assert.equal(agent.messages.at(-1)?.content, 'next turn works');
  assertEveryRequestValid(emulator);
  assertValidHistory(agent.messages, profile, { model });
}

describe('dsh-messages-sanitizer: the `prepare` crash in the tool scheduler', () => {
  // `ctx.tools[symbol].prepare` read on an undefined entry: the failure happens before the tool starts.
  const write: Tool = {
    name: 'write',
    description: 'writes a file',
    parameters: {},
    run: async function (this: unknown) {
      const registry: Record<string, { prepare(): void }> = {};
      registry['write']!.prepare();
      return 'written';
    },
  };

  test('live: the crash becomes an error result, the model carries on, the next turn works', async () => {
    const emulator = createEmulator({
      script: [
        { toolCalls: [{ name: 'write', arguments: '{"path":"a.txt"}' }] },
        { text: 'The write tool crashed; I will tell the user.' },
      ],
    });
    const store = recordingStore();
    const agent = agentFor(emulator, { tools: [write], session: store });
    const events = await collect(agent.runTurn('write a.txt'));
    const end = events.find((event) => event.type === 'tool-call-end');
    assert.ok(
      end?.type === 'tool-call-end' &&
        end.isError &&
        /Cannot read properties of undefined \(reading 'prepare'\)/.test(end.result),
    );
    assert.equal(reason(events), 'stop');
    assertValidHistory(await store.current());
    await nextTurnSucceeds(agent, emulator);
  });

  test('a session the crash already poisoned (orphan call, crash-retry user messages) is repaired on open', async () => {
    const poisoned: Message[] = [
      { role: 'user', content: 'create the plugin' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_00_write', type: 'function', function: { name: 'write', arguments: '{}' } }],
      },
      { role: 'user', content: 'continue' },
      { role: 'user', content: 'continue' },
    ];
    assert.notDeepEqual(check(poisoned, { profile: 'deepseek', model: 'deepseek-chat' }), []);
    const emulator = createEmulator();
    const agent = agentFor(emulator, { session: recordingStore(poisoned) });
    const opened = await agent.open();
    assert.ok(
      opened.changes.some((change) => change.kind === 'result-synthesized' && change.toolCallId === 'call_00_write'),
    );
    assertValidHistory(agent.messages);
    // Nothing the user said is gone.
    assert.deepEqual(userTexts(agent.messages), ['create the plugin', 'continue', 'continue']);
    await nextTurnSucceeds(agent, emulator);
  });
});

describe('an abort in the middle of parallel tools', () => {
  test('finished calls keep their results, the rest are answered "cancelled", the next turn works', async () => {
    const emulator = createEmulator({
      script: [
        {
          toolCalls: [
            { name: 'fast', arguments: '{}' },
            { name: 'slow', arguments: '{}' },
            { name: 'deaf', arguments: '{}' },
          ],
        },
      ],
    });
    const fast: Tool = { name: 'fast', description: '', parameters: {}, run: async () => 'fast done' };
    const slow: Tool = {
      name: 'slow',
      description: 'honours the signal',
      parameters: {},
      run: (_args, { signal }) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
        ),
    };
    let releaseDeaf = (): void => undefined;
    const deaf: Tool = {
      name: 'deaf',
      description: 'ignores the signal',
      parameters: {},
      run: () => new Promise((resolve) => (releaseDeaf = () => resolve('too late'))),
    };
    const store = recordingStore();
    const agent = agentFor(emulator, { tools: [fast, slow, deaf], session: store });
    const controller = new AbortController();
    const events = await collect(agent.runTurn('run all three', { signal: controller.signal }), (event) => {
      if (event.type === 'tool-call-end' && event.name === 'fast') controller.abort();
    });
    releaseDeaf();
    assert.equal(reason(events), 'aborted');
    const results = agent.messages
      .filter((message) => message.role === 'tool')
      .map((message) => String(message.content));
    assert.deepEqual(
      results.map((result) => result.split(':')[0]),
      ['fast done', 'cancelled', 'cancelled'],
    );
    assert.deepEqual(
      (await store.current()).map((message) => message.role),
      ['user', 'assistant', 'tool', 'tool', 'tool'],
    );
    await nextTurnSucceeds(agent, emulator);
  });

  test('a consumer that stops reading mid-block leaves a whole, saved block too', async () => {
    const emulator = createEmulator({
      script: [
        {
          toolCalls: [
            { name: 'echo', arguments: '{"text":"1"}' },
            { name: 'echo', arguments: '{"text":"2"}' },
          ],
        },
      ],
    });
    const store = recordingStore();
    // Read-only, so both calls start at once (a tool with side effects would not start after the consumer left).
    const agent = agentFor(emulator, { tools: [{ ...echoTool, readOnly: true }], session: store });
    await collect(agent.runTurn('go'), (event) => event.type === 'tool-call-start');
    const saved = await store.current();
    assert.deepEqual(
      saved.map((message) => message.role),
      ['user', 'assistant', 'tool', 'tool'],
    );
    // The tools had finished: their real results are kept, not replaced by synthetic ones.
    assert.deepEqual(
      saved.slice(2).map((message) => message.content),
      ['echo: 1', 'echo: 2'],
    );
    assertValidHistory(saved);
    await nextTurnSucceeds(agent, emulator);
  });

  test('an abort while the answer streams keeps the partial answer, marked as interrupted', async () => {
    const emulator = createEmulator({
      script: [{ text: 'a long streamed answer', stream: { chunkSize: 2, delayMs: 5 } }],
    });
    const agent = agentFor(emulator);
    const controller = new AbortController();
    const events = await collect(agent.runTurn('hi', { signal: controller.signal }), (event) => {
      if (event.type === 'text-delta') controller.abort();
    });
    assert.equal(reason(events), 'aborted');
    assert.deepEqual(
      agent.messages.map((message) => message.role),
      ['user', 'assistant'],
    );
    assert.match(String(agent.messages[1]?.content), /^a [\s\S]*\n\n\[interrupted by the user\]$/);
    assert.equal(agent.messages[1]?.tool_calls, undefined);
    await nextTurnSucceeds(agent, emulator);
    assert.deepEqual(userTexts(agent.messages), ['hi', 'are we good?']);
  });
});

describe('a process killed mid-dispatch', () => {
  test('the saved state (calls without results) is repaired on the next load', async () => {
    const emulator = createEmulator({
      script: [
        {
          toolCalls: [
            { name: 'echo', arguments: '{"text":"x"}' },
            { name: 'echo', arguments: '{"text":"y"}' },
          ],
        },
        { text: 'done' },
      ],
    });
    const store = recordingStore();
    await collect(agentFor(emulator, { tools: [echoTool], session: store }).runTurn('go'));
    // The snapshot taken right after the assistant message was saved: what a kill during the tools leaves.
    const killed = store.snapshots.find(
      (snapshot) => snapshot.at(-1)?.role === 'assistant' && snapshot.at(-1)?.tool_calls !== undefined,
    );
    assert.ok(killed !== undefined);
    const revived = agentFor(emulator, { tools: [echoTool], session: recordingStore(killed) });
    const opened = await revived.open();
    assert.equal(opened.changes.filter((change) => change.kind === 'result-synthesized').length, 2);
    assertValidHistory(revived.messages);
    await nextTurnSucceeds(revived, emulator);
  });
});

describe('NexForgeCLI: a tool result that is a dump of a session file', () => {
  test('the dump is kept as content through a transcript save and reload, and the next turn works', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'unstuck-agent-dump-'));
    try {
      const path = join(directory, 'session.md');
      const other: Message[] = [
        { role: 'user', content: 'old question' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_old', type: 'function', function: { name: 'read_file', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_old', content: 'old result' },
        { role: 'assistant', content: 'old answer' },
      ];
      // What `read_file .nexforge/sessions/session-...md` returned: a whole session file, markers and all.
      const dump = `${formatTranscript(other)}\n<!-- nf-msg eyJyb2xlIjoiYXNzaXN0YW50In0= -->\n 12 | <!-- nf-msg eyJyb2xlIjoidXNlciJ9 -->\n`;
      const readFile: Tool = { name: 'read_file', description: 'reads a file', parameters: {}, run: async () => dump };
      const emulator = createEmulator({
        script: [
          { toolCalls: [{ name: 'read_file', arguments: '{"path":".nexforge/sessions/session-1.md"}' }] },
          { text: 'That file is a session transcript.' },
        ],
      });
      const store = createTranscriptStore(path);
      const agent = agentFor(emulator, { tools: [readFile], session: store });
      assert.equal(reason(await collect(agent.runTurn('show me the old session'))), 'stop');
      await store.close();

      const reopenedStore = createTranscriptStore(path);
      const reopened = agentFor(emulator, { tools: [readFile], session: reopenedStore });
      const opened = await reopened.open();
      assert.deepEqual(opened.problems, []);
      assert.deepEqual(opened.changes, []);
      assert.deepEqual(reopened.messages, agent.messages, 'no ghost messages decoded out of the dump');
      assert.equal(reopened.messages.find((message) => message.role === 'tool')?.content, dump);
      await nextTurnSucceeds(reopened, emulator);
      await reopenedStore.close();
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('NexForgeCLI: the 3,785-message session-122357 with a violation at index 1724', () => {
  test('one full-sequence repair makes it acceptable; nothing but the ghosts moves; the next turn works', async () => {
    const session = buildPoisonedSession();
    assert.equal(session.length, POISONED_LENGTH);
    const violations = check(session, { profile: 'deepseek', model: 'deepseek-chat' });
    assert.ok(
      violations.length > 0 &&
        violations.every((violation) => violation.index >= POISONED_INDEX && violation.index < POISONED_INDEX + 8),
    );
    const emulator = createEmulator({ script: [{ text: 'Picking up where we left off.' }] });
    const store = recordingStore(session);
    const agent = agentFor(emulator, { session: store });
    const events = await collect(agent.runTurn('where were we?'));
    assert.equal(reason(events), 'stop');
    const repairEvent = events.find((event) => event.type === 'repair');
    assert.ok(repairEvent?.type === 'repair');
    assert.ok(
      repairEvent.changes.every((change) => change.index >= POISONED_INDEX && change.index < POISONED_INDEX + 8),
      JSON.stringify(repairEvent.changes),
    );
    assert.ok(repairEvent.changes.some((change) => change.kind === 'message-moved'));
    assert.deepEqual(
      emulator.requests.map((request) => request.status),
      [200],
    );
    assert.equal(emulator.requests[0]?.body.messages.length, POISONED_LENGTH + 1);
    // Repaired first, then the user's message added: the first state saved with it is already valid.
    const first = store.snapshots.find((snapshot) => snapshot.at(-1)?.content === 'where were we?');
    assert.equal(first?.length, POISONED_LENGTH + 1);
    assertValidHistory(first!);
    // No message lost: the repair moves the ghosts after the block, it does not drop them.
    const saved = await store.current();
    assert.equal(saved.length, POISONED_LENGTH + 2);
    assert.equal(userTexts(saved).length, 45);
    await nextTurnSucceeds(agent, emulator);
  });
});

describe('a hint raised during a tool block', () => {
  test('the hint lands after the last result of the block, and the next turn works', async () => {
    const flaky: Tool = {
      name: 'flaky',
      description: '',
      parameters: {},
      run: async () => {
        throw new Error('still broken');
      },
    };
    const calls = (count: number) => Array.from({ length: count }, () => ({ name: 'flaky', arguments: '{}' }));
    // The third failure happens at the first call of a four-call block: the hint waits for the other three.
    const emulator = createEmulator({
      script: [
        { toolCalls: calls(2) },
        {
          toolCalls: [
            ...calls(1),
            { name: 'echo', arguments: '{"text":"a"}' },
            { name: 'echo', arguments: '{"text":"b"}' },
            ...calls(1),
          ],
        },
        { text: 'stopping' },
      ],
    });
    const agent = agentFor(emulator, { tools: [flaky, echoTool] });
    await collect(agent.runTurn('try it'));
    const roles = agent.messages.map((message) => message.role);
    const hint = roles.indexOf('system');
    assert.ok(hint > 0);
    assert.deepEqual(roles.slice(hint - 5, hint + 2), [
      'assistant',
      'tool',
      'tool',
      'tool',
      'tool',
      'system',
      'assistant',
    ]);
    await nextTurnSucceeds(agent, emulator);
  });
});

describe('DeepSeek thinking mode: a tool loop', () => {
  test('reasoning_content is kept on every assistant message and sent back; the next turn works', async () => {
    const model = 'deepseek-v4-pro';
    const emulator = createEmulator({
      profile: 'deepseek',
      script: [
        { reasoning: 'I should read the file first.', toolCalls: [{ name: 'echo', arguments: '{"text":"file"}' }] },
        { reasoning: 'The file says file.', text: 'It says "file".' },
        { text: 'No reasoning this time.' },
      ],
    });
    const agent = agentFor(emulator, { model, tools: [echoTool], thinking: true });
    const events = await collect(agent.runTurn('what does the file say?'));
    assert.equal(reason(events), 'stop');
    assert.ok(events.some((event) => event.type === 'reasoning-delta'));
    const assistants = agent.messages.filter((message) => message.role === 'assistant');
    assert.deepEqual(
      assistants.map((message) => message.reasoning_content),
      ['I should read the file first.', 'The file says file.'],
    );
    // The second request sent the tool-call turn's reasoning back, and asked for thinking.
    const second = emulator.requests[1]?.body;
    assert.equal(second.messages[1].reasoning_content, 'I should read the file first.');
    assert.deepEqual(second.thinking, { type: 'enabled' });
    const next = await collect(agent.runTurn('thanks'));
    assert.equal(reason(next), 'stop');
    assert.equal(
      agent.messages.at(-1)?.reasoning_content,
      '',
      'no reasoning from the server: kept as "" rather than absent',
    );
    assertEveryRequestValid(emulator);
    assertValidHistory(agent.messages, 'deepseek', { model, thinking: true });
  });

  test('a thinking session saved by a client that dropped reasoning_content is repaired before it is sent', async () => {
    const model = 'deepseek-v4-pro';
    const history: Message[] = [
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'echo', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      { role: 'assistant', content: 'Sunny.' },
    ];
    const emulator = createEmulator({ profile: 'deepseek' });
    const agent = agentFor(emulator, { model, session: recordingStore(history) });
    const events = await collect(agent.runTurn('and tomorrow?'));
    assert.equal(reason(events), 'stop');
    assert.ok(
      events.some(
        (event) =>
          event.type === 'repair' && event.changes.some((change) => change.kind === 'reasoning-content-filled'),
      ),
    );
    assertEveryRequestValid(emulator);
    await nextTurnSucceeds(agent, emulator, 'deepseek', model);
  });
});

describe('a history that outgrows the context window', () => {
  test('old turns are left out of requests whole; no request has an orphan; the saved history keeps everything', async () => {
    const emulator = createEmulator({ profile: 'deepseek' });
    const contextWindow = 1_200;
    const agent = agentFor(emulator, { tools: [echoTool], contextWindow, reserveTokens: 200, compaction: false });
    const compacts: AgentEvent[] = [];
    for (let turn = 0; turn < 12; turn += 1) {
      emulator.push(
        { toolCalls: [{ name: 'echo', arguments: JSON.stringify({ text: `turn ${turn} `.repeat(20) }) }] },
        { text: `answer ${turn} `.repeat(15) },
      );
      const events = await collect(agent.runTurn(`question ${turn} `.repeat(10)));
      assert.equal(reason(events), 'stop');
      compacts.push(...events.filter((event) => event.type === 'compact'));
    }
    assert.ok(compacts.length > 0, 'the window was reached');
    assertEveryRequestValid(emulator);
    for (const request of emulator.requests) {
      assert.equal(request.body.messages[0].role, 'user', 'every window starts at a turn boundary');
      assert.ok(
        JSON.stringify(request.body.messages).length / 4 <= contextWindow,
        'the emulator counted the request under the window',
      );
    }
    assert.equal(userTexts(agent.messages).length, 12, 'the saved history is never trimmed');
    assertValidHistory(agent.messages);
    await nextTurnSucceeds(agent, emulator);
  });

  test('a single turn bigger than the window drops its oldest steps, never splitting a block', async () => {
    const emulator = createEmulator({ profile: 'deepseek' });
    const script = Array.from({ length: 10 }, (_, index) => ({
      toolCalls: [
        { name: 'echo', arguments: JSON.stringify({ text: `step ${index} `.repeat(30) }) },
        { name: 'echo', arguments: '{"text":"b"}' },
      ],
    }));
    emulator.push(...script, { text: 'done at last' });
    const agent = agentFor(emulator, { tools: [echoTool], contextWindow: 1_500, reserveTokens: 100 });
    const events = await collect(agent.runTurn('a long task'));
    assert.equal(reason(events), 'stop');
    assert.ok(events.some((event) => event.type === 'compact'));
    assertEveryRequestValid(emulator);
    const last = emulator.requests.at(-1)?.body.messages;
    assert.equal(last[0].content, 'a long task', 'the user message of the turn is always sent');
    assert.equal(last[1].role, 'assistant');
  });
});

describe('a file-backed session', () => {
  test('a JSONL journal gets appends step by step, a repair rewrites it, and a reopened agent sees the same history', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'unstuck-agent-journal-'));
    try {
      const path = join(directory, 'session.jsonl');
      const seeded = createJournalStore(path);
      // A killed run: calls without results, saved as the process died.
      await seeded.save([
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_dead', type: 'function', function: { name: 'echo', arguments: '{}' } }],
        },
      ]);
      await seeded.close();
      const emulator = createEmulator({
        script: [{ toolCalls: [{ name: 'echo', arguments: '{"text":"j"}' }] }, { text: 'journaled' }],
      });
      const store = createJournalStore(path);
      const agent = agentFor(emulator, { tools: [echoTool], session: store });
      const events = await collect(agent.runTurn('again'));
      assert.equal(reason(events), 'stop');
      await store.close();
      const reopenedStore = createJournalStore(path);
      const reopened = agentFor(emulator, { session: reopenedStore });
      const opened = await reopened.open();
      assert.deepEqual(opened, { changes: [], problems: [] });
      assert.deepEqual(reopened.messages, agent.messages);
      assertValidHistory(reopened.messages);
      await nextTurnSucceeds(reopened, emulator);
      await reopenedStore.close();
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
