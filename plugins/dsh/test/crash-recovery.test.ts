import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  balancedAtEnd,
  crashedSession,
  createAgent,
  createSession,
  eventTypes,
  nextRequest,
  PREPARE_CRASH,
  runTurn,
  useHosts,
} from './harness.js';

const host = useHosts();

describe('a crashed tool dispatch', () => {
  it('leaves the log the way the rc.8 loop does, and without the plugin every later request is a 400', async () => {
    const off = await host({ enabled: false });
    const agent = createAgent(createSession());
    const crash = await crashedSession(off, agent);
    assert.deepEqual(crash.end, { kind: 'error', error: { message: PREPARE_CRASH, code: 'UNKNOWN' } });
    assert.deepEqual(eventTypes(agent.session), [
      'turn/start',
      'step/start',
      'user/message',
      'assistant/message',
      'tool/call',
      'step/end',
      'turn/end',
    ]);
    assert.equal(agent.woken, 0);
    const next = await runTurn(off, agent, [{ text: 'never reached' }], 'continue');
    assert.equal(next.end.kind, 'error');
    assert.equal(next.failures[0]?.status, 400);
    assert.match(next.failures[0]!.message, /insufficient tool messages following tool_calls message/);
  });

  it('agent/status (wakeAfterCrash): going idle after the crash sends an error result per open call and wakes the agent; the woken turn is legal', async () => {
    const on = await host();
    const agent = createAgent(createSession());
    await crashedSession(on, agent);
    assert.equal(agent.woken, 1);
    assert.equal(agent.inbox.length, 1);
    const [result] = agent.inbox;
    assert.deepEqual(result!.source, { kind: 'tool', callId: 'call_write_1' });
    assert.equal(result!.content[0]!.type, 'tool-result');

    const woken = await runTurn(on, agent, [{ text: 'The write tool failed; I will tell the user.' }]);
    assert.equal(woken.end.kind, 'completed');
    assert.deepEqual(woken.failures, []);
    const [request] = woken.requests;
    assert.deepEqual(
      request!.map((message) => message.role),
      ['user', 'assistant', 'tool'],
    );
    assert.equal(request![2]!.tool_call_id, 'call_write_1');
    assert.match(String(request![2]!.content), /did not run to completion.*reading 'prepare'/s);
  });

  it("leaves the recovered turn's answer as the last assistant message (nothing is appended after it at idle)", async () => {
    const on = await host();
    const agent = createAgent(createSession());
    await crashedSession(on, agent);
    await runTurn(on, agent, [{ text: 'The write tool failed.' }]);
    const events = agent.session.events;
    assert.equal(events[events.length - 1]!.type, 'turn/end');
    const lastAssistant = [...events].reverse().find((event) => event.type === 'assistant/message');
    assert.deepEqual(lastAssistant?.type === 'assistant/message' && lastAssistant.data.message.content, [
      { type: 'text', text: 'The write tool failed.' },
    ]);
  });

  it("closes compaction's tool-pairing balance at the next step, keeping the reasoning, and that turn is legal", async () => {
    const on = await host();
    const agent = createAgent(createSession());
    await crashedSession(on, agent);
    await runTurn(on, agent, [{ text: 'The write tool failed.' }]);
    assert.equal(balancedAtEnd(agent.session), false, 'a result logged as user/message does not count for compaction');
    const after = await runTurn(on, agent, [{ text: 'ok' }], 'thanks');
    assert.equal(after.end.kind, 'completed');
    assert.deepEqual(after.failures, []);
    assert.equal(balancedAtEnd(agent.session), true);
    const assistant = agent.session.deriveMessages().find((message) => message.role === 'assistant')!;
    assert.deepEqual(
      assistant.content.map((block) => block.type),
      ['reasoning', 'text', 'text'],
    );
    assert.deepEqual(assistant.content[0], { type: 'reasoning', text: 'I should write the file.' });
    assert.match(String(after.requests[0]![2]!.content), /^\[unstuck\] Tool error result for call call_write_1:/);
    assert.deepEqual(nextRequest(agent.session).violations, []);
  });

  it("agent/pre-step (balanceThenAnswerOpenCalls): with the plugin loaded only after the crash (a restart), the next turn's first request is legal", async () => {
    const off = await host({ enabled: false });
    const agent = createAgent(createSession());
    await crashedSession(off, agent);
    const on = await host();
    const next = await runTurn(on, agent, [{ text: 'Retrying the write differently.' }], 'continue');
    assert.equal(next.end.kind, 'completed');
    assert.deepEqual(next.failures, []);
    assert.deepEqual(
      next.requests[0]!.map((message) => message.role),
      ['user', 'assistant', 'tool', 'user'],
    );
    await runTurn(on, agent, [{ text: 'ok' }], 'thanks');
    assert.equal(balancedAtEnd(agent.session), true);
  });

  it('does not wake the agent forever when every recovery crashes again', async () => {
    const on = await host();
    const agent = createAgent(createSession());
    await crashedSession(on, agent);
    assert.equal(agent.woken, 1);
    await runTurn(on, agent, [
      { text: 'again', calls: [{ id: 'call_retry_1', name: 'write', arguments: '{}' }], crash: true },
    ]);
    assert.equal(agent.woken, 2);
    await runTurn(on, agent, [
      { text: 'again', calls: [{ id: 'call_retry_2', name: 'write', arguments: '{}' }], crash: true },
    ]);
    assert.equal(agent.woken, 2, 'a third crash in a row is left to the next turn');
    assert.equal(agent.inbox.length, 0);
    assert.deepEqual(
      nextRequest(agent.session).violations.map((violation) => violation.rule),
      ['tool-calls-unanswered'],
    );
    const resumed = await runTurn(on, agent, [{ text: 'giving up on the tool' }], 'stop trying');
    assert.equal(resumed.end.kind, 'completed');
    assert.deepEqual(resumed.failures, []);
  });
});
