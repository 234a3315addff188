import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CallId, createAssistantMessage, createToolResultMessage, createUserMessage } from '@deepseek-ai/dsh-llm';
import { foldSurface } from '@deepseek-ai/dsh-session';
import { planBalance } from '../src/plan-balance.js';
import { planHeal } from '../src/plan-heal.js';
import { readSurface } from '../src/surface.js';
import {
  balancedAtEnd,
  crashedSession,
  createAgent,
  createSession,
  MODEL,
  nextRequest,
  PROVIDER,
  runTurn,
  type TestAgent,
  useHosts,
} from './harness.js';

const host = useHosts();

/**
 * The log dsh-messages-sanitizer's README describes (https://github.com/Leeminjing/dsh-messages-sanitizer):
 * a crash, then the user retrying "continue" on a harness without
 * the plugin (every retry a 400, each leaving its user message behind), then a stray tool result
 * that pairs with nothing (what an older sanitizer left).
 */
async function pollutedSession(): Promise<TestAgent> {
  const off = await host({ enabled: false });
  const agent = createAgent(createSession());
  await crashedSession(off, agent);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const stuck = await runTurn(off, agent, [{ text: 'never reached' }], 'continue');
    assert.equal(stuck.failures[0]?.status, 400);
  }
  const orphan = createToolResultMessage({
    callId: CallId('call_ghost'),
    content: [{ type: 'text', text: 'stale output' }],
    isError: false,
  });
  agent.session.append('user/message', orphan, { surfaceOp: 'append' });
  return agent;
}

describe('a polluted log (an orphan call, stale duplicate user messages, an orphan result)', () => {
  it('is one the next request cannot pass as it stands', async () => {
    const agent = await pollutedSession();
    const rules = nextRequest(agent.session).violations.map((violation) => violation.rule);
    assert.ok(rules.includes('tool-calls-unanswered'), rules.join(', '));
  });

  it('heals on the first pairing 400 with one surface replacement and one retry; the turn completes', async () => {
    const agent = await pollutedSession();
    const on = await host();
    const turn = await runTurn(on, agent, [{ text: 'Picking up where we left off.' }], 'continue');
    assert.equal(turn.end.kind, 'completed');
    assert.equal(turn.failures.length, 1, 'exactly one 400 before the heal');
    assert.equal(turn.requests.length, 2, 'exactly one retry');
    const healed = turn.requests[1]!;
    // write a.txt | the crashed assistant | the two stale "continue"s folded | the orphan as text | this turn's "continue"
    assert.deepEqual(
      healed.map((message) => message.role),
      ['user', 'assistant', 'user', 'user', 'user'],
    );
    assert.equal(healed[1]!.tool_calls, undefined);
    assert.equal(healed[1]!.reasoning_content, 'I should write the file.');
    assert.match(String(healed[1]!.content), /^Writing it now\.\n\n\[unstuck\].*write \(id call_write_1\)/s);
    assert.equal(healed[2]!.content, 'continue');
    assert.equal(healed[3]!.content, '[unstuck] Tool result for call call_ghost:\nstale output');
    assert.equal(healed[4]!.content, 'continue');
    assert.deepEqual(nextRequest(agent.session).violations, []);
    assert.equal(balancedAtEnd(agent.session), true);
    foldSurface(agent.session.events);
  });

  it('is idempotent: a healed log plans nothing, and later turns add no replacement', async () => {
    const agent = await pollutedSession();
    const on = await host();
    await runTurn(on, agent, [{ text: 'ok' }], 'continue');
    assert.deepEqual(planHeal(agent.session, readSurface(agent.session)), []);
    assert.deepEqual(planBalance(readSurface(agent.session)), []);
    const before = agent.session.events.length;
    const later = await runTurn(on, agent, [{ text: 'fine' }], 'and now?');
    assert.deepEqual(later.failures, []);
    const replacements = agent.session.events
      .slice(before)
      .filter((event) => typeof (event as { surfaceOp?: unknown }).surfaceOp === 'object');
    assert.deepEqual(replacements, []);
  });

  it('restores calls a replacement stripped while their results are still adjacent', async () => {
    const session = createSession();
    session.append('turn/start', { turn: 1 });
    session.append('step/start', { turn: 1, step: 1 });
    session.append(
      'user/message',
      createUserMessage({ content: [{ type: 'text', text: 'read it' }], source: { kind: 'user' } }),
      { surfaceOp: 'append' },
    );
    const call = { type: 'tool-call' as const, id: CallId('call_read'), name: 'read', arguments: '{"path":"a"}' };
    const original = session.append(
      'assistant/message',
      {
        turn: 1,
        step: 1,
        message: createAssistantMessage({
          content: [{ type: 'reasoning', text: 'look first' }, call],
          source: { provider: PROVIDER, model: MODEL },
        }),
      },
      { surfaceOp: 'append', sourceEventSeqs: [] },
    );
    session.append('tool/call', { turn: 1, step: 1, callId: call.id, name: call.name, arguments: call.arguments });
    session.append(
      'tool/result',
      {
        turn: 1,
        step: 1,
        message: createToolResultMessage({ callId: call.id, content: [{ type: 'text', text: 'a' }], isError: false }),
      },
      { surfaceOp: 'append' },
    );
    // A sanitizer that stripped the call although its result was there:
    session.append(
      'assistant/message',
      {
        turn: 1,
        step: 1,
        message: createAssistantMessage({
          content: [{ type: 'reasoning', text: 'look first' }],
          source: { provider: PROVIDER, model: MODEL },
        }),
      },
      { surfaceOp: { op: 'replace', start: original.seq, end: original.seq }, sourceEventSeqs: [original.seq] },
    );
    assert.ok(nextRequest(session).violations.some((violation) => violation.rule === 'tool-result-orphan'));

    const edits = planHeal(session, readSurface(session));
    assert.deepEqual(
      edits.map((edit) => edit.kind),
      ['restore-calls'],
    );
    const on = await host();
    const agent = createAgent(session);
    const turn = await runTurn(on, agent, [{ text: 'a' }], 'so?');
    assert.deepEqual(turn.requests.length, 2);
    const assistant = turn.requests[1]![1]!;
    assert.deepEqual(
      assistant.tool_calls?.map((toolCall) => toolCall.id),
      ['call_read'],
    );
    assert.equal(assistant.reasoning_content, 'look first');
    assert.equal(turn.requests[1]![2]!.role, 'tool');
    assert.equal(balancedAtEnd(session), true);
  });

  it('unpairs a call whose id arrived empty (logged before the stream guard gave such calls ids) together with its empty-id result', async () => {
    const session = createSession();
    session.append('turn/start', { turn: 1 });
    session.append('step/start', { turn: 1, step: 1 });
    session.append(
      'user/message',
      createUserMessage({ content: [{ type: 'text', text: 'read it' }], source: { kind: 'user' } }),
      { surfaceOp: 'append' },
    );
    const call = { type: 'tool-call' as const, id: CallId(''), name: 'read', arguments: '{"path":"a"}' };
    session.append(
      'assistant/message',
      {
        turn: 1,
        step: 1,
        message: createAssistantMessage({
          content: [{ type: 'reasoning', text: 'read first' }, call],
          source: { provider: PROVIDER, model: MODEL },
        }),
      },
      { surfaceOp: 'append', sourceEventSeqs: [] },
    );
    session.append('tool/call', { turn: 1, step: 1, callId: call.id, name: call.name, arguments: call.arguments });
    session.append(
      'tool/result',
      {
        turn: 1,
        step: 1,
        message: createToolResultMessage({
          callId: call.id,
          content: [{ type: 'text', text: 'contents of a' }],
          isError: false,
        }),
      },
      { surfaceOp: 'append' },
    );
    session.append('step/end', { turn: 1, step: 1 });
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
    assert.ok(nextRequest(session).violations.some((violation) => violation.rule === 'tool-call-id-missing'));

    const on = await host();
    const turn = await runTurn(on, createAgent(session), [{ text: 'a says hi' }], 'so?');
    assert.equal(turn.end.kind, 'completed');
    assert.equal(turn.failures.length, 1);
    const healed = turn.requests[1]!;
    assert.deepEqual(
      healed.map((message) => message.role),
      ['user', 'assistant', 'user', 'user'],
    );
    assert.equal(healed[1]!.reasoning_content, 'read first');
    assert.equal(healed[2]!.content, '[unstuck] Tool result for call (empty id):\ncontents of a');
    assert.equal(balancedAtEnd(session), true);
  });
});
