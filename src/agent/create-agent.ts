import type { AgentHistory } from './agent-history.js';
import { createAgentHistory } from './agent-history.js';
import type { Compactor } from './compact-session.js';
import { createCompactor } from './compact-session.js';
import type { ContextBudget } from './context-budget.js';
import { createContextBudget } from './context-budget.js';
import { createLoopGuard } from './loop-guard.js';
import { requestBody } from './request-body.js';
import { requestCompletion } from './request-completion.js';
import type { AgentConfig } from './resolve-agent-options.js';
import { resolveAgentOptions } from './resolve-agent-options.js';
import { runToolBlock, toolMessages } from './run-tool-block.js';
import { toAssistantMessage, withSystemPrompt } from './turn-messages.js';
import type { Agent, AgentEvent, AgentOptions } from './types.js';

/** Appended to an answer the user aborted while it streamed, so the model knows it was cut off. */
const INTERRUPTED = '\n\n[interrupted by the user]';

/**
 * The turn runner. Its history cannot go bad by construction: a full-sequence repair before the
 * user's message is added and before every request; every tool call answered exactly once; hints
 * only after a whole tool block; one strongest-repair retry on a pairing 400; transient failures
 * retried here and nowhere else; the session saved after every step. See docs/decisions/agent-*.md,
 * and docs/decisions/agent-runner-parts.md for the parts it is composed of.
 */
export function createAgent(options: AgentOptions): Agent {
  const config = resolveAgentOptions(options);
  const history = createAgentHistory(config);
  const budget = createContextBudget(config);
  const compactor = createCompactor({
    history: () => history.messages,
    replace: (next) => history.replace(next),
    path: config.request,
    // The summarizing request: the runner's model and settings, its own instructions, no tools.
    bodyFor: (messages) => requestBody(config, messages),
    budgetTokens: budget.budgetTokens,
    charsPerToken: budget.charsPerToken,
    tokensOf: budget.tokensOf,
    thinking: config.thinking,
    threshold: config.compaction.threshold,
    options: config.compaction.options,
  });
  let running = false;

  return {
    get messages() {
      return history.messages;
    },
    open: () => history.open(),
    async *compact(compactOptions = {}) {
      if (running) {
        yield { type: 'compaction-failed', message: 'a turn is running: compact when it is over' };
        return;
      }
      running = true;
      try {
        await history.open();
        yield* compactor.run(compactOptions.signal ?? new AbortController().signal, true);
      } catch (error) {
        yield { type: 'compaction-failed', message: error instanceof Error ? error.message : String(error) };
      } finally {
        running = false;
      }
    },
    async *runTurn(text, turnOptions = {}) {
      if (running) {
        yield { type: 'error', message: 'a turn is already running on this agent' };
        yield { type: 'turn-end', reason: 'error' };
        return;
      }
      if (text.length === 0) {
        // An empty message would be dropped by a repair for providers that reject empty content.
        yield { type: 'error', message: 'the message is empty: nothing to send' };
        yield { type: 'turn-end', reason: 'error' };
        return;
      }
      running = true;
      const controller = new AbortController();
      const outer = turnOptions.signal;
      const onAbort = (): void => controller.abort(outer?.reason);
      if (outer?.aborted === true) controller.abort(outer.reason);
      outer?.addEventListener('abort', onAbort, { once: true });
      try {
        yield* turn({ config, history, budget, compactor }, text, controller.signal);
      } catch (error) {
        await history.settle().catch(() => undefined);
        yield { type: 'error', message: error instanceof Error ? error.message : String(error) };
        yield { type: 'turn-end', reason: 'error' };
      } finally {
        outer?.removeEventListener('abort', onAbort);
        controller.abort(new Error('turn over'));
        await history.settle().catch(() => undefined);
        running = false;
      }
    },
  };
}

interface TurnParts {
  config: AgentConfig;
  history: AgentHistory;
  budget: ContextBudget;
  compactor: Compactor;
}

/**
 * One turn: the user's message, then requests and tool blocks until the model answers without
 * calls. Throws only when the session cannot be loaded or saved (`runTurn` reports it); the history is left
 * whole by `history.settle()` wherever the turn stops.
 */
async function* turn(parts: TurnParts, text: string, signal: AbortSignal): AsyncGenerator<AgentEvent> {
  const { config, history, budget, compactor } = parts;
  const usage = { promptTokens: 0, completionTokens: 0 };
  let sawUsage = false;
  const end = (reason: 'stop' | 'error' | 'aborted'): AgentEvent =>
    sawUsage ? { type: 'turn-end', reason, usage: { ...usage } } : { type: 'turn-end', reason };

  const firstOpen = !history.opened;
  const opened = await history.open();
  if (firstOpen && opened.changes.length > 0) yield { type: 'repair', changes: opened.changes };
  // Full-sequence repair first, then the user's message: nothing ever removes it afterwards.
  const before = history.repairWhole();
  if (before.changed) yield { type: 'repair', changes: before.changes };
  await history.appendUser(text);
  // At most one compaction attempt per turn: a failed one is not retried at every step.
  let compactionDue = config.compaction.auto;
  const guard = createLoopGuard({ hintAfterFailures: config.hintAfterFailures, role: config.hintRole });

  for (let step = 0; ; step += 1) {
    if (signal.aborted) {
      yield end('aborted');
      return;
    }
    if (step >= config.maxSteps) {
      yield { type: 'error', message: `stopped after ${config.maxSteps} model requests in one turn` };
      yield end('error');
      return;
    }
    const prepared = history.prepareRequest();
    if (prepared.changed) {
      yield { type: 'repair', changes: prepared.changes };
      await history.save();
    }
    if (compactionDue && compactor.wanted()) {
      compactionDue = false;
      yield* compactor.run(signal, false);
    }

    const outcome = yield* requestCompletion(config.request, {
      signal,
      prepare: () => {
        const view = budget.window(history.messages);
        const messages = withSystemPrompt(view.messages, config.systemPrompt, config.systemFirstOnly);
        return {
          body: requestBody(config, messages, config.wireTools),
          events:
            view.omitted > 0
              ? [{ type: 'compact', omittedMessages: view.omitted, estimatedTokens: view.estimatedTokens }]
              : [],
          context: view,
        };
      },
      heal: async () => [{ type: 'repair', changes: await history.heal() }],
    });
    if (outcome.kind === 'aborted') {
      // The answer the user saw stays in the history, marked; its unfinished tool calls do not
      // (a call without its result would be a broken history).
      if (outcome.partial.text.trim() !== '') {
        const partial = {
          text: `${outcome.partial.text}${INTERRUPTED}`,
          reasoning: outcome.partial.reasoning,
          toolCalls: [],
          finishReason: undefined,
          usage: undefined,
        };
        await history.append(toAssistantMessage(partial, config.thinking));
      }
      yield end('aborted');
      return;
    }
    if (outcome.kind === 'failed') {
      yield outcome.event;
      yield end('error');
      return;
    }
    const { completion, context: view } = outcome;
    if (completion.usage !== undefined) {
      sawUsage = true;
      usage.promptTokens += completion.usage.promptTokens;
      usage.completionTokens += completion.usage.completionTokens;
      budget.calibrate(view.messages, completion.usage.promptTokens);
    }

    const assistant = toAssistantMessage(completion, config.thinking);
    await history.append(assistant);
    const calls = assistant.tool_calls ?? [];
    if (calls.length === 0) {
      yield end('stop');
      return;
    }
    const block = runToolBlock(calls, config.tools, signal);
    history.openBlock(block.outcomes.then(toolMessages));
    const outcomes = yield* block.events();
    // Loop-breaking hints go after the whole block, never between its results.
    await history.closeBlock([...toolMessages(outcomes), ...guard.hintsAfter(outcomes)]);
  }
}
