import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LlmFailure } from '@deepseek-ai/dsh-llm';
import { check, getProfile } from '../../../src/core/index.js';
import type { RequestErrorAction } from '../src/host.js';
import {
  crashedSession,
  createAgent,
  createSession,
  type Host,
  nextRequest,
  runTurn,
  type TestAgent,
  useHosts,
} from './harness.js';

const host = useHosts();

const DELEGATED = Symbol('delegated');

/** A session stuck on the pairing 400: crashed, then one failed "continue" after the orphan. */
async function stuckAgent(): Promise<TestAgent> {
  const off = await host({ enabled: false });
  const agent = createAgent(createSession());
  await crashedSession(off, agent);
  await runTurn(off, agent, [{ text: 'never' }], 'continue');
  return agent;
}

/** DeepSeek's 400 for the pairing violation the core finds in a stuck request. */
function pairing400(): LlmFailure {
  const stuck = [
    { role: 'user', content: 'write a.txt' },
    {
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'call_write_1', type: 'function', function: { name: 'write', arguments: '{}' } }],
    },
    { role: 'user', content: 'continue' },
  ];
  const [violation] = check(stuck, { profile: 'deepseek', model: 'deepseek-chat' });
  assert.equal(violation?.rule, 'tool-calls-unanswered');
  const { status, body } = getProfile('deepseek').errorResponse(violation!);
  return { message: (body as { error: { message: string } }).error.message, code: 'INVALID_REQUEST', status };
}

async function requestError(
  target: Host,
  agent: TestAgent,
  failure: LlmFailure,
  position = { turn: 9, step: 1 },
): Promise<RequestErrorAction | typeof DELEGATED> {
  return target.ctx.waterfall(
    'agent/request-error',
    {
      agent,
      ...position,
      provider: 'deepseek-official',
      failure,
      retryPolicy: undefined,
      signal: new AbortController().signal,
    },
    (async () => DELEGATED) as never,
  );
}

describe('agent/request-error (healAndRetry)', () => {
  it("heals and retries on a pairing 400 (DeepSeek's own wording, classified by the core)", async () => {
    const agent = await stuckAgent();
    const on = await host();
    const before = agent.session.events.length;
    assert.deepEqual(await requestError(on, agent, pairing400()), { kind: 'retry' });
    assert.ok(agent.session.events.length > before);
    assert.deepEqual(nextRequest(agent.session).violations, []);
    const infos = on.logs.filter((record) => record.type === 'info').map((record) => record.text);
    assert.equal(infos.length, 1);
    assert.match(
      infos[0]!,
      /^session test-session-\d+: assistant at seq 3: stripped 1 unanswered call\(s\); retrying$/,
    );
  });

  it('retries only once per step, even if the surface is broken again', async () => {
    const agent = await stuckAgent();
    const on = await host();
    assert.deepEqual(await requestError(on, agent, pairing400()), { kind: 'retry' });
    await runTurn(
      await host({ enabled: false }),
      agent,
      [{ calls: [{ id: 'call_again', name: 'write', arguments: '{}' }], crash: true }],
      'try again',
    );
    assert.notDeepEqual(nextRequest(agent.session).violations, []);
    assert.equal(await requestError(on, agent, pairing400()), DELEGATED);
    assert.deepEqual(await requestError(on, agent, pairing400(), { turn: 9, step: 2 }), { kind: 'retry' });
  });

  it('delegates when a pairing 400 meets a surface it has nothing to change on (no endless retry)', async () => {
    const on = await host();
    const agent = createAgent(createSession());
    await runTurn(on, agent, [{ text: 'hello' }], 'hi');
    const before = agent.session.events.length;
    assert.equal(await requestError(on, agent, pairing400()), DELEGATED);
    assert.equal(agent.session.events.length, before);
  });

  for (const [what, failure] of [
    [
      'a 400 that is not about pairing (content risk)',
      { message: 'Content Exists Risk', code: 'INVALID_REQUEST', status: 400 },
    ],
    [
      'a context-window 400',
      {
        message: "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens.",
        code: 'CONTEXT_WINDOW_EXCEEDED',
        status: 400,
      },
    ],
    ['a 500', { message: 'Internal Server Error', code: 'SERVER', status: 500 }],
    ['a 429', { message: 'Rate limit reached', code: 'RATE_LIMIT', status: 429 }],
    ['a transport failure', { message: 'fetch failed', code: 'TRANSPORT' }],
  ] as const) {
    it(`leaves ${what} to the next listener and the session untouched`, async () => {
      const agent = await stuckAgent();
      const on = await host();
      const before = agent.session.events.length;
      assert.equal(await requestError(on, agent, failure), DELEGATED);
      assert.equal(agent.session.events.length, before);
    });
  }

  it('does nothing when disabled', async () => {
    const agent = await stuckAgent();
    const off = await host({ enabled: false });
    assert.equal(await requestError(off, agent, pairing400()), DELEGATED);
  });
});
