/**
 * Property: whatever the model, the tools, the network and the user do (tool failures, bad
 * arguments, unknown tools, aborts, a reader that walks away, transient errors, stalls, dropped
 * streams, kills between steps), every request the strict emulator receives is valid, every state
 * the session was ever saved in loads valid, no user message is ever lost, and the next turn works.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { AgentEvent, Tool } from '../../src/agent/index.js';
import type { Message } from '../../src/core/index.js';
import { check } from '../../src/core/index.js';
import type { Emulator, Step } from '../../src/emulator/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import { agentFor, recordingStore, userTexts } from './helpers.js';

const tools: Tool[] = [
  { name: 'ok', description: '', parameters: {}, run: async () => 'fine' },
  {
    name: 'throws',
    description: '',
    parameters: {},
    run: async () => {
      throw new Error('tool failed');
    },
  },
  {
    name: 'slow',
    description: '',
    parameters: {},
    run: (_args, { signal }) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve('slow but done'), 2);
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            reject(new Error('stopped'));
          },
          { once: true },
        );
      }),
  },
];

// Ids: usually the emulator's own (unique), sometimes the model reuses one from a small pool, even twice in one message.
const callArbitrary = fc
  .record({
    name: fc.constantFrom('ok', 'throws', 'slow', 'not_a_tool'),
    broken: fc.boolean(),
    id: fc.option(fc.constantFrom('call_a', 'call_b'), { freq: 3, nil: undefined }),
  })
  .map(({ name, broken, id }) => ({
    name,
    arguments: broken ? '{"half":' : '{}',
    ...(id === undefined ? {} : { id }),
  }));

const faultArbitrary = fc.oneof(
  fc.constant<Step['fault']>({ status: 429, retryAfter: 0 }),
  fc.constant<Step['fault']>({ status: 500 }),
  fc.constant<Step['fault']>({ status: 503 }),
  fc.nat(5).map<Step['fault']>((chunks) => ({ disconnectAfterChunks: chunks })),
  fc.constant<Step['fault']>({ stall: 1_000 }),
);

const stepArbitrary = fc
  .record({
    toolCalls: fc.option(fc.array(callArbitrary, { minLength: 1, maxLength: 3 }), { nil: undefined }),
    fault: fc.option(faultArbitrary, { freq: 3, nil: undefined }),
    reasoning: fc.option(fc.string({ maxLength: 12 }), { nil: undefined }),
    text: fc.option(fc.string({ maxLength: 16 }), { nil: undefined }),
  })
  .map((fields) => {
    const step: Step = { stream: { chunkSize: 3 } };
    if (fields.toolCalls !== undefined) step.toolCalls = fields.toolCalls;
    if (fields.fault !== undefined) step.fault = fields.fault;
    if (fields.reasoning !== undefined) step.reasoning = fields.reasoning;
    if (fields.text !== undefined) step.text = fields.text;
    return step;
  });

const turnArbitrary = fc.record({
  text: fc.string({ minLength: 1, maxLength: 12 }),
  abortAtEvent: fc.option(fc.nat(10), { nil: undefined }),
  stopReadingAtEvent: fc.option(fc.nat(10), { nil: undefined }),
  /** Kill after this turn and restart from one of the saved states (picked by this number). */
  killToSnapshot: fc.option(fc.nat(), { freq: 3, nil: undefined }),
});

const conversationArbitrary = fc.record({
  stream: fc.boolean(),
  thinking: fc.boolean(),
  script: fc.array(stepArbitrary, { maxLength: 10 }),
  turns: fc.array(turnArbitrary, { minLength: 1, maxLength: 4 }),
});

function isSubsequence(expected: readonly string[], actual: readonly string[]): boolean {
  let at = 0;
  for (const text of actual) if (at < expected.length && text === expected[at]) at += 1;
  return at === expected.length;
}

test('random conversations: every request valid, every saved state loads valid, no user message lost', async () => {
  await fc.assert(
    fc.asyncProperty(conversationArbitrary, async (conversation) => {
      const model = conversation.thinking ? 'deepseek-v4-pro' : 'deepseek-chat';
      const emulators: Emulator[] = [createEmulator({ profile: 'deepseek', script: conversation.script })];
      const current = (): Emulator => emulators[emulators.length - 1]!;
      const fetchThrough = ((input: string | URL | Request, init?: RequestInit) =>
        current().fetch(input, init)) as typeof fetch;
      const snapshots: Message[][] = [];
      let store = recordingStore();
      const make = () =>
        agentFor(current(), {
          model,
          stream: conversation.stream,
          tools,
          session: store,
          fetch: fetchThrough,
          maxSteps: 6,
          idleTimeoutMs: 15,
        });
      let agent = make();
      let expectedUsers: string[] = [];

      for (const turn of conversation.turns) {
        const controller = new AbortController();
        let seen = 0;
        let ended: AgentEvent | undefined;
        for await (const event of agent.runTurn(turn.text, { signal: controller.signal })) {
          if (event.type === 'turn-end') ended = event;
          seen += 1;
          if (seen === turn.abortAtEvent) controller.abort();
          if (seen === turn.stopReadingAtEvent) break;
        }
        if (turn.stopReadingAtEvent === undefined || seen < turn.stopReadingAtEvent)
          assert.ok(ended !== undefined, 'a turn read to the end ends with turn-end');
        expectedUsers.push(turn.text);
        assert.ok(
          isSubsequence(expectedUsers, userTexts(agent.messages)),
          `user messages lost: ${JSON.stringify(expectedUsers)} vs ${JSON.stringify(userTexts(agent.messages))}`,
        );
        if (turn.killToSnapshot !== undefined && store.snapshots.length > 0) {
          const snapshot = store.snapshots[turn.killToSnapshot % store.snapshots.length]!;
          snapshots.push(...store.snapshots);
          store = recordingStore(snapshot);
          agent = make();
          await agent.open();
          expectedUsers = userTexts(snapshot);
          assert.ok(isSubsequence(expectedUsers, userTexts(agent.messages)), 'open() keeps every user message');
        }
      }
      snapshots.push(...store.snapshots);

      // The provider comes back healthy: the next turn works.
      emulators.push(createEmulator({ profile: 'deepseek' }));
      let last: AgentEvent | undefined;
      for await (const event of agent.runTurn('and now?')) last = event;
      assert.deepEqual(last?.type === 'turn-end' ? last.reason : last, 'stop');

      for (const emulator of emulators) {
        for (const request of emulator.requests)
          assert.deepEqual(request.violations, [], `invalid request sent: ${JSON.stringify(request.violations)}`);
      }
      for (const snapshot of snapshots) {
        const reloaded = agentFor(current(), { model, session: recordingStore(snapshot) });
        await reloaded.open();
        assert.deepEqual(check(reloaded.messages, { profile: 'deepseek', model }), [], 'a saved state loads valid');
        assert.ok(isSubsequence(userTexts(snapshot), userTexts(reloaded.messages)));
      }
      assert.deepEqual(check(agent.messages, { profile: 'deepseek', model }), []);
    }),
    { numRuns: 300, seed: 4_2026_1130 },
  );
});
