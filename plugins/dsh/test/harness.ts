/**
 * A test driver for the plugin on the REAL harness packages: a real cordis `Context` with the
 * plugin loaded, real `Session`s from `@deepseek-ai/dsh-session`, real messages, `BlockAssembler`,
 * `markAgentLoopRequest` and `deepFreeze` from `@deepseek-ai/dsh-llm`. What stands in for the
 * harness is the agent loop's turn/step sequence (mirroring `@deepseek-ai/dsh-agent-loop`
 * 0.1.0-rc.8 `turn()`/`step()`, including where `tool/call` is logged before the scheduler
 * crashes) and the provider, which checks each request with the unstuck core and answers a
 * violation with DeepSeek's own 400 (the core profile's `errorResponse`).
 */
import { afterEach } from 'node:test';
import { Context } from '@deepseek-ai/cordis';
import { toolPairingBalancedAfter } from '@deepseek-ai/dsh-compaction';
import {
  BlockAssembler,
  CallId,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  deepFreeze,
  type GenerateOptions,
  type LlmFailure,
  markAgentLoopRequest,
  type StreamChunk,
  type UserMessage,
} from '@deepseek-ai/dsh-llm';
import { Session, SessionId } from '@deepseek-ai/dsh-session';
import { check, getProfile, type Message as WireMessage } from '../../../src/core/index.js';
import type { AgentLike, PreStepDecision, RequestErrorAction } from '../src/host.js';
import * as plugin from '../src/index.js';
import { toWire } from '../src/to-wire.js';

export const MODEL = 'deepseek-chat';
export const PROVIDER = 'deepseek-official';
export const PREPARE_CRASH = "Cannot read properties of undefined (reading 'prepare')";

export interface LogRecord {
  readonly name: string;
  readonly type: string;
  /** The formatted line, as a console exporter would print it. */
  readonly text: string;
}

export interface Host {
  readonly ctx: Context;
  /** Everything the plugin logged. */
  readonly logs: LogRecord[];
  dispose(): Promise<void>;
}

/** A cordis root with the plugin (or any module shaped like it) loaded and applied. */
/** A `host()` for one test file: every host it creates is disposed after each test. */
export function useHosts(): (config?: { enabled?: boolean }) => Promise<Host> {
  const hosts: Host[] = [];
  afterEach(async () => {
    for (const created of hosts.splice(0)) await created.dispose();
  });
  return async (config = {}) => {
    const created = await createHost(config);
    hosts.push(created);
    return created;
  };
}

export async function createHost(config: Partial<plugin.Config> = {}, module: object = plugin): Promise<Host> {
  const ctx = new Context();
  const logs: LogRecord[] = [];
  const exporter = {
    colors: false as const,
    levels: { default: 3 },
    export: (message: { name: string; type: string; args: unknown[] }) => {
      const [format, ...rest] = message.args;
      let text = String(format);
      for (const value of rest) text = text.replace(/%[sdo]/, String(value));
      logs.push({ name: message.name, type: message.type, text });
    },
  };
  ctx.logger.exporter(exporter as never);
  const fiber = ctx.plugin(module as typeof plugin, config as plugin.Config);
  await fiber;
  return {
    ctx,
    logs,
    dispose: async () => {
      await fiber.dispose?.();
    },
  };
}

let sessions = 0;
export function createSession(): Session {
  sessions += 1;
  return Session.create(SessionId(`test-session-${sessions}`));
}

export interface TestAgent extends AgentLike {
  readonly inbox: UserMessage[];
  woken: number;
}

export function createAgent(session: Session): TestAgent {
  const agent: TestAgent = {
    session,
    options: { model: MODEL },
    inbox: [],
    woken: 0,
    send(message, _target, wakeup) {
      agent.inbox.push(message);
      if (wakeup) agent.woken += 1;
    },
  };
  return agent;
}

export function userText(text: string): UserMessage {
  return createUserMessage({ content: [{ type: 'text', text }], source: { kind: 'user' } });
}

export interface Call {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/** One model answer: text, reasoning, calls. `crash` makes the tool scheduler fail on its calls. */
export interface Reply {
  readonly text?: string;
  readonly reasoning?: string;
  readonly calls?: readonly Call[];
  readonly crash?: boolean;
}

export interface TurnOutcome {
  readonly turn: number;
  readonly end: { kind: string; error?: LlmFailure };
  /** Every request the provider received, as DeepSeek's wire messages. */
  readonly requests: WireMessage[][];
  /** The failures the provider answered with. */
  readonly failures: LlmFailure[];
}

function lastTurn(session: Session): number {
  let turn = 0;
  for (const event of session.events) if (event.type === 'turn/start') turn = event.data.turn;
  return turn;
}

/** The provider: DeepSeek's 400 for an illegal request, otherwise the scripted reply as a stream. */
async function* provider(
  request: GenerateOptions,
  reply: Reply,
  seen: WireMessage[][],
  failures: LlmFailure[],
): AsyncIterable<StreamChunk> {
  const wire = toWire(request.messages, request.system).messages;
  seen.push(wire);
  const violation = check(wire, { profile: 'deepseek', model: request.model })[0];
  if (violation !== undefined) {
    const { status, body } = getProfile('deepseek').errorResponse(violation);
    const failure: LlmFailure = {
      message: (body as { error: { message: string } }).error.message,
      code: 'INVALID_REQUEST',
      status,
    };
    failures.push(failure);
    yield { type: 'finish', reason: { kind: 'error', failure } };
    return;
  }
  let index = 0;
  if (reply.reasoning !== undefined) {
    yield { type: 'block-start', index, blockType: 'reasoning' };
    yield { type: 'reasoning-delta', index, text: reply.reasoning };
    yield { type: 'block-end', index, block: { type: 'reasoning', text: reply.reasoning } };
    index += 1;
  }
  if (reply.text !== undefined) {
    yield { type: 'block-start', index, blockType: 'text' };
    yield { type: 'text-delta', index, text: reply.text };
    yield { type: 'block-end', index, block: { type: 'text', text: reply.text } };
    index += 1;
  }
  for (const call of reply.calls ?? []) {
    yield { type: 'block-start', index, blockType: 'tool-call' };
    yield { type: 'tool-call-delta', index, id: CallId(call.id), name: call.name, argumentsDelta: call.arguments };
    yield {
      type: 'block-end',
      index,
      block: { type: 'tool-call', id: CallId(call.id), name: call.name, arguments: call.arguments },
    };
    index += 1;
  }
  yield {
    type: 'finish',
    reason: { kind: reply.calls !== undefined && reply.calls.length > 0 ? 'tool-calls' : 'stop' },
  };
}

/**
 * One turn the way the rc.8 agent loop runs it: `turn/start`, the `agent/pre-step` waterfall over
 * the claimed inbox, `step/start`, the step's user messages, the frozen loop request through the
 * `llm/stream` waterfall, `agent/request-error` on a failed finish (retry = rebuild from the
 * session), `assistant/message`, then `tool/call` + `tool/result` per call — or, when the reply
 * says `crash`, `tool/call` and the scheduler's TypeError, `step/end`, `turn/end {error}` — and
 * finally `agent/status` idle.
 */
export async function runTurn(
  host: Host,
  agent: TestAgent,
  replies: readonly Reply[],
  prompt?: string,
): Promise<TurnOutcome> {
  const { ctx } = host;
  const session = agent.session;
  const turn = lastTurn(session) + 1;
  const requests: WireMessage[][] = [];
  const failures: LlmFailure[] = [];
  const signal = new AbortController().signal;
  session.append('turn/start', { turn });
  let end: TurnOutcome['end'] = { kind: 'completed' };
  let step = 0;
  let replyIndex = 0;
  try {
    while (true) {
      step += 1;
      const claimed = agent.inbox.splice(0);
      if (step === 1 && prompt !== undefined) claimed.push(userText(prompt));
      const decision = await ctx.waterfall(
        'agent/pre-step',
        { agent, messages: claimed, turn, step, signal },
        (async () => ({ kind: 'enter', messages: claimed })) as () => Promise<PreStepDecision>,
      );
      if (decision.kind === 'reject') {
        end = { kind: 'blocked' };
        break;
      }
      session.append('step/start', { turn, step });
      try {
        for (const message of decision.messages) session.append('user/message', message, { surfaceOp: 'append' });
        const reply = replies[replyIndex] ?? { text: 'done' };
        replyIndex += 1;
        let message: ReturnType<typeof createAssistantMessage>;
        while (true) {
          const request = markAgentLoopRequest(
            deepFreeze({ provider: PROVIDER, model: MODEL, messages: session.deriveMessages(), sessionId: session.id }),
          );
          const assembler = new BlockAssembler();
          const stream = await ctx.waterfall('llm/stream', request, () => provider(request, reply, requests, failures));
          for await (const chunk of stream) assembler.push(chunk);
          const finish = assembler.finish;
          if (finish.kind === 'error' || finish.kind === 'aborted') {
            const action = await ctx.waterfall(
              'agent/request-error',
              { agent, turn, step, provider: PROVIDER, failure: finish.failure, retryPolicy: undefined, signal },
              (async () => undefined) as () => Promise<RequestErrorAction>,
            );
            if (action?.kind !== 'retry')
              throw Object.assign(new Error(finish.failure.message), { failure: finish.failure });
            continue;
          }
          message = createAssistantMessage({
            content: assembler.blocks(),
            source: { provider: PROVIDER, model: MODEL },
          });
          break;
        }
        session.append('assistant/message', { turn, step, message }, { surfaceOp: 'append', sourceEventSeqs: [] });
        const calls = message.content.filter((block) => block.type === 'tool-call');
        if (calls.length === 0) break;
        for (const call of calls) {
          session.append('tool/call', { turn, step, callId: call.id, name: call.name, arguments: call.arguments });
          if (reply.crash === true) throw new TypeError(PREPARE_CRASH);
          const result = createToolResultMessage({
            callId: call.id,
            content: [{ type: 'text', text: `${call.name} ok` }],
            isError: false,
          });
          session.append('tool/result', { turn, step, message: result }, { surfaceOp: 'append' });
        }
      } finally {
        session.append('step/end', { turn, step });
      }
    }
  } catch (error) {
    const failure = (error as { failure?: LlmFailure }).failure ?? {
      message: (error as Error).message,
      code: 'UNKNOWN',
    };
    end = { kind: 'error', error: failure };
  }
  session.append('turn/end', { turn, reason: end as never });
  ctx.emit('agent/status', { agent, status: 'idle' });
  return { turn, end, requests, failures };
}

/** The session's next request as DeepSeek would receive it, and what the core says about it. */
export function nextRequest(session: Session): { wire: WireMessage[]; violations: ReturnType<typeof check> } {
  const wire = toWire(session.deriveMessages()).messages;
  return { wire, violations: check(wire, { profile: 'deepseek', model: MODEL }) };
}

/** The crashed session a failed tool dispatch leaves (DeepSeek Harness discussion #4843, https://github.com/deepseek-ai/deepseek-harness/discussions/4843): `assistant/message{tool_calls}` -> `tool/call` -> crash -> `step/end` -> `turn/end error`. */
export async function crashedSession(host: Host, agent: TestAgent): Promise<TurnOutcome> {
  return runTurn(
    host,
    agent,
    [
      {
        reasoning: 'I should write the file.',
        text: 'Writing it now.',
        calls: [{ id: 'call_write_1', name: 'write', arguments: '{"path":"a.txt","content":"hi"}' }],
        crash: true,
      },
    ],
    'write a.txt',
  );
}

export function eventTypes(session: Session, from = 0): string[] {
  return session.events.slice(from).map((event) => event.type);
}

/** What `@deepseek-ai/dsh-compaction` (the real package) says about cutting after the whole surface. */
export function balancedAtEnd(session: Session): boolean {
  const nodes = session.surface.nodes;
  const last = nodes[nodes.length - 1];
  return last === undefined ? true : toolPairingBalancedAfter(session, last);
}
