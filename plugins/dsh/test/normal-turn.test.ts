import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAgent, createSession, eventTypes, type Reply, runTurn, useHosts } from './harness.js';

const host = useHosts();

// DeepSeek wants call ids unique across the request, so each turn gets its own.
const turnScript = (turn: string): Reply[] => [
  {
    reasoning: 'Need the file first.',
    text: 'Reading.',
    calls: [
      { id: `call_${turn}_a`, name: 'read', arguments: '{"path":"a"}' },
      { id: `call_${turn}_b`, name: 'read', arguments: '{"path":"b"}' },
    ],
  },
  { text: 'Both files say hi.' },
];
const script = turnScript('1');

describe('a normal turn', () => {
  it('is left exactly as it is: same events, same requests, same history as without the plugin', async () => {
    const without = createAgent(createSession());
    const plain = await runTurn(await host({ enabled: false }), without, script, 'read a and b');
    const withPlugin = createAgent(createSession());
    const guarded = await runTurn(await host(), withPlugin, script, 'read a and b');

    assert.equal(guarded.end.kind, 'completed');
    assert.deepEqual(guarded.failures, []);
    assert.deepEqual(guarded.requests, plain.requests);
    assert.deepEqual(eventTypes(withPlugin.session), eventTypes(without.session));
    const strip = (messages: readonly { id: unknown }[]) => messages.map(({ id: _id, ...rest }) => rest);
    assert.deepEqual(strip(withPlugin.session.deriveMessages()), strip(without.session.deriveMessages()));
    assert.equal(withPlugin.woken, 0);
    assert.equal(withPlugin.inbox.length, 0);
    assert.equal(eventTypes(withPlugin.session).filter((type) => type === 'assistant/message').length, 2);
  });

  it('stays untouched over several turns (idle, pre-step and the stream guard all pass through)', async () => {
    const on = await host();
    const agent = createAgent(createSession());
    for (const prompt of ['one', 'two', 'three']) {
      const turn = await runTurn(on, agent, turnScript(prompt), prompt);
      assert.equal(turn.end.kind, 'completed');
      assert.deepEqual(turn.failures, []);
    }
    const replaced = agent.session.events.filter(
      (event) => typeof (event as { surfaceOp?: unknown }).surfaceOp === 'object',
    );
    assert.deepEqual(replaced, []);
  });
});
