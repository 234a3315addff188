/**
 * unstuck-dsh: keeps a DeepSeek Harness session's tool calls paired, so a crashed tool dispatch
 * (`Cannot read properties of undefined (reading 'prepare')`) never wedges the conversation on
 * `400 INVALID_REQUEST`. Four handlers, one per harness hook, each named after what it does:
 *
 * - `wakeAfterCrash` (`agent/status` idle after a crashed dispatch): an error result per
 *   unanswered call is sent and the agent woken, so the model sees the failure and decides.
 * - `balanceThenAnswerOpenCalls` (`agent/pre-step`): pairs answered by results logged as user
 *   messages are made compaction-balanced, then error results for calls still open at the tail
 *   go first in the step, the only place they can still be adjacent to their call.
 * - `healAndRetry` (`agent/request-error` on a pairing 400): a surface replacement, then
 *   `{ kind: 'retry' }` once per step; a healed surface plans nothing, so it never loops.
 * - `checkEveryRequest` (`llm/stream`, through `guardRequest`): every request checked with the
 *   core; loop requests (frozen) only warned about; a request that is not frozen (compaction's)
 *   repaired in place; empty tool-call ids in the answer replaced by stable ones.
 *
 * Every listener catches its own errors: a safety net must never be what breaks a turn.
 */
import type { Context } from '@deepseek-ai/cordis';
import z from '@deepseek-ai/schemastery';
import { applyEdits } from './apply-edits.js';
import { check, classifyError, isHealableRule } from './core.js';
import { findDangling } from './dangling.js';
import { type FailureLike, isResultOnly, isToolResult, type Message, type Session, type UserMessage } from './host.js';
import { planBalance } from './plan-balance.js';
import { planHeal } from './plan-heal.js';
import { guardRequest, streamKey, withStableIds } from './stream-guard.js';
import { lastTurnEnd, readSurface, type SurfaceNode } from './surface.js';
import { syntheticResult } from './synthetic-result.js';
import { toWire } from './to-wire.js';

export const name = 'unstuck-dsh';
export const inject: string[] = [];

export interface Config {
  enabled: boolean;
}

export const Config = z.object({
  enabled: z.boolean().default(true).description('Turn every handler on or off.'),
});

/**
 * How many times in a row `wakeAfterCrash` wakes the agent for one session before it leaves
 * recovery to the next step (open calls answered first) and to the heal on a pairing 400.
 */
const MAX_CONSECUTIVE_WAKES = 2;

function messagesOf(nodes: readonly SurfaceNode[]): Message[] {
  const messages: Message[] = [];
  for (const node of nodes) if (node.message !== null) messages.push(node.message);
  return messages;
}

function visibleMessages(session: Session): Message[] {
  return messagesOf(readSurface(session));
}

function crashReason(session: Session): string | undefined {
  const end = lastTurnEnd(session) as { kind: string; error?: { message?: unknown } } | undefined;
  return end?.kind === 'error' && typeof end.error?.message === 'string' ? end.error.message : undefined;
}

function normalise(text: string): string {
  return text.replace(/messages\[\d+\]/g, 'messages[N]').trim();
}

/**
 * True when the 400 is one the core recognises as a tool-pairing violation: by `classifyError`,
 * or, for wordings it does not classify (DeepSeek's "Missing required parameter:
 * 'messages[3].tool_calls[0].id'"), because the core's check of the session's next request
 * finds a pairing violation whose provider wording is that very text (message indexes aside:
 * the provider counts the system prompt).
 */
export function isPairingFailure(failure: FailureLike, session?: Session, model?: string): boolean {
  if (failure.status !== 400 || failure.code !== 'INVALID_REQUEST') return false;
  const classified = classifyError(400, { error: { message: failure.message, type: 'invalid_request_error' } });
  if (classified !== undefined) return isHealableRule(classified.rule);
  if (session === undefined) return false;
  const wanted = normalise(failure.message);
  const violations = check(toWire(visibleMessages(session)).messages, {
    profile: 'deepseek',
    ...(model === undefined ? {} : { model }),
  });
  return violations.some((violation) => isHealableRule(violation.rule) && normalise(violation.message) === wanted);
}

export function apply(ctx: Context, config: Config): void {
  const logger = ctx.logger(name);
  const wakes = new WeakMap<Session, number>();
  const retried = new WeakMap<Session, Set<string>>();

  const safely = <T>(what: string, fallback: T, run: () => T): T => {
    try {
      return run();
    } catch (error) {
      logger.warn(
        '%s failed, leaving the session as it is: %s',
        what,
        error instanceof Error ? error.message : String(error),
      );
      return fallback;
    }
  };

  // The agent went idle after a turn that crashed with calls still open.
  ctx.on('agent/status', function wakeAfterCrash(payload) {
    if (!config.enabled || payload.status !== 'idle') return;
    safely('idle recovery', undefined, () => {
      const { agent } = payload;
      const session = agent.session;
      const end = lastTurnEnd(session);
      if (end?.kind === 'completed') wakes.delete(session);
      const dangling = findDangling(visibleMessages(session));
      if (dangling === undefined || end?.kind !== 'error') return;
      const count = wakes.get(session) ?? 0;
      if (count >= MAX_CONSECUTIVE_WAKES) {
        logger.warn('session %s: %d crashed recoveries in a row; not waking the agent again', session.id, count);
        return;
      }
      wakes.set(session, count + 1);
      const reason = crashReason(session);
      dangling.calls.forEach((call, position) => {
        agent.send(syntheticResult(call, reason), 'next-turn', position === dangling.calls.length - 1);
      });
      logger.info(
        'session %s: sent %d error result(s) for a crashed tool dispatch and woke the agent',
        session.id,
        dangling.calls.length,
      );
    });
  });

  // Results for open calls enter the step first, adjacent to their call. Registered first
  // (prepend) so that, before anything else runs in the step (compaction's pressure check
  // included), pairs that a crash recovery completed with user/message results are made balanced.
  ctx.on(
    'agent/pre-step',
    async function balanceThenAnswerOpenCalls(payload, next) {
      if (config.enabled) {
        safely('tool-pairing balance', undefined, () => {
          const session = payload.agent.session;
          const nodes = readSurface(session);
          if (findDangling(messagesOf(nodes)) !== undefined) return;
          const edits = planBalance(nodes);
          if (edits.length === 0) return;
          applyEdits(session, edits);
          logger.info('session %s: %s', session.id, edits.map((edit) => edit.detail).join('; '));
        });
      }
      const decision = await next();
      if (!config.enabled || decision.kind !== 'enter') return decision;
      return safely('pre-step results', decision, () => {
        const session = payload.agent.session;
        const dangling = findDangling(visibleMessages(session));
        if (dangling === undefined) return decision;
        const open = new Set(dangling.calls.map((call) => call.id as string));
        const answering: UserMessage[] = [];
        const rest: UserMessage[] = [];
        for (const message of decision.messages) {
          const answers =
            isResultOnly(message) &&
            message.content.every((block) => isToolResult(block) && open.has(block.toolCallId));
          (answers ? answering : rest).push(message);
        }
        for (const message of answering)
          for (const block of message.content) if (isToolResult(block)) open.delete(block.toolCallId);
        const reason = crashReason(session);
        const synthetic = dangling.calls
          .filter((call) => open.has(call.id))
          .map((call) => syntheticResult(call, reason));
        if (
          synthetic.length === 0 &&
          decision.messages.slice(0, answering.length).every((message, index) => message === answering[index])
        )
          return decision;
        logger.info(
          'session %s: %d error result(s) enter the step ahead of its other messages',
          session.id,
          synthetic.length + answering.length,
        );
        return { kind: 'enter', messages: [...answering, ...synthetic, ...rest] };
      });
    },
    { prepend: true },
  );

  // A pairing 400 heals the surface, then the step retries once. Registered first so a
  // terminal retry policy downstream never sees a failure this handler owns.
  ctx.on(
    'agent/request-error',
    async function healAndRetry(payload, next) {
      if (!config.enabled) return next();
      const session = payload.agent.session;
      if (
        !safely('failure check', false, () => isPairingFailure(payload.failure, session, payload.agent.options?.model))
      )
        return next();
      const key = `${payload.turn}:${payload.step}`;
      const done = retried.get(session) ?? new Set<string>();
      if (done.has(key)) return next();
      const healed = safely('surface replacement', false, () => {
        const edits = planHeal(session, readSurface(session));
        if (edits.length === 0) return false;
        applyEdits(session, edits, { turn: payload.turn, step: payload.step });
        logger.info('session %s: %s; retrying', session.id, edits.map((edit) => edit.detail).join('; '));
        return true;
      });
      if (!healed) return next();
      done.add(key);
      retried.set(session, done);
      return { kind: 'retry' };
    },
    { prepend: true },
  );

  // Every request checked; what is ours to change repaired; empty call ids made stable.
  ctx.on('llm/stream', function checkEveryRequest(options, next) {
    if (!config.enabled) return next();
    safely('request check', undefined, () => {
      const report = guardRequest(options);
      if (report.violations.length === 0) return;
      const rules = [...new Set(report.violations.map((violation) => violation.rule))].join(', ');
      if (report.repaired) logger.info('%s request repaired in place (%s)', report.purpose, rules);
      else
        logger.warn(
          '%s request has %d problem(s) the provider may reject (%s)%s',
          report.purpose,
          report.violations.length,
          rules,
          report.frozen ? '; it is frozen, so the session is healed instead' : '',
        );
    });
    return withStableIds(next(), streamKey(options));
  });
}
