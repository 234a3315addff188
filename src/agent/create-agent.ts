import { setTimeout as delay } from 'node:timers/promises';
import type { Change, Message } from '../core/index.js';
import { getProfile, repair } from '../core/index.js';
import type { SessionProblem } from '../session/index.js';
import { createMemoryStore } from '../session/index.js';
import { collectIds, reusesIds } from './call-ids.js';
import { compactedView, compactionThreshold, defaultContextWindow } from './compact-history.js';
import { createCompactor } from './compact-session.js';
import type { RequestWindow } from './context-window.js';
import { charsOf, selectWindow } from './context-window.js';
import type { RequestPath } from './request-completion.js';
import { requestCompletion } from './request-completion.js';
import type { ToolOutcome } from './run-tool-block.js';
import { CANCELLED, startToolBlock, toolMessages } from './run-tool-block.js';
import { lastUserIndex, loopHint, toAssistantMessage, withSystemPrompt } from './turn-messages.js';
import type { Agent, AgentEvent, AgentOptions, Tool } from './types.js';

const DEFAULTS = {
  maxRetries: 4,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  idleTimeoutMs: 120_000,
  maxSteps: 64,
  hintAfterFailures: 3,
};

type Usage = { promptTokens: number; completionTokens: number };

/** Appended to an answer the user aborted while it streamed, so the model knows it was cut off. */
const INTERRUPTED = '\n\n[interrupted by the user]';

/**
 * The turn runner. Its history cannot go bad by construction: a full-sequence repair before the
 * user's message is added and before every request; every tool call answered exactly once; hints
 * only after a whole tool block; one strongest-repair retry on a pairing 400; transient failures
 * retried here and nowhere else; the session saved after every step. See docs/decisions/agent-*.md.
 */
export function createAgent(options: AgentOptions): Agent {
  const profile = options.profile ?? 'openai';
  const thinking = options.thinking ?? getProfile(profile).thinkingByDefault(options.model);
  // A user's message is never removed: even the strongest repair keeps a repeated one (core option).
  const repairOptions = { profile, model: options.model, thinking, foldRepeatedUserMessages: false } as const;
  const store = options.session ?? createMemoryStore();
  const tools = new Map<string, Tool>((options.tools ?? []).map((tool) => [tool.name, tool]));
  const wireTools =
    tools.size === 0
      ? undefined
      : [...tools.values()].map((tool) => ({
          type: 'function',
          function: { name: tool.name, description: tool.description, parameters: tool.parameters },
        }));
  const fixedChars =
    (options.systemPrompt?.length ?? 0) + (wireTools === undefined ? 0 : JSON.stringify(wireTools).length);
  const url = `${options.baseURL.replace(/\/+$/, '')}/chat/completions`;
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const stream = options.stream ?? true;
  const retry = {
    maxRetries: options.retry?.maxRetries ?? DEFAULTS.maxRetries,
    baseDelayMs: options.retry?.baseDelayMs ?? DEFAULTS.baseDelayMs,
    maxDelayMs: options.retry?.maxDelayMs ?? DEFAULTS.maxDelayMs,
  };
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULTS.idleTimeoutMs;
  const maxSteps = options.maxSteps ?? DEFAULTS.maxSteps;
  const hintAfterFailures = options.hintAfterFailures ?? DEFAULTS.hintAfterFailures;
  // The default pause between retries: Node's own timer, which an abort cuts short.
  const sleep = options.sleep ?? ((ms: number, signal: AbortSignal) => delay(ms, undefined, { signal }));
  // Where a system message may only come first (Anthropic, local chat templates), a hint is a user message.
  const systemFirstOnly = getProfile(profile).rules.some((rule) => rule.id === 'system-message-position');
  const hintRole = systemFirstOnly ? 'user' : 'system';

  let history: Message[] = [];
  /** How many messages at the start of `history` the store already has, unchanged. */
  let persisted = 0;
  let rewrite = false;
  let opening: Promise<{ changes: Change[]; problems: SessionProblem[] }> | undefined;
  let running = false;
  let charsPerToken = 3;
  /**
   * The history array and length last found valid at request scope. Within a turn the runner only
   * appends, so the next check can cover just the current turn (see prepareRequest).
   */
  let verified: { array: Message[]; length: number; priorIds: Set<string>; tailStart: number } | undefined;
  /** A tool block whose results are not in the history yet: settled with `cancelled` if the turn stops early. */
  let openBlock: { pending: Promise<ToolOutcome>[] } | undefined;

  function adopt(result: { messages: Message[]; changed: boolean }): void {
    if (!result.changed) return;
    history = result.messages;
    rewrite = true;
  }

  async function persist(): Promise<void> {
    if (!rewrite && persisted === history.length) return;
    try {
      if (!rewrite && store.append !== undefined) await store.append(history.slice(persisted));
      else await store.save(history);
    } catch (error) {
      throw new Error(`could not save the session: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
    persisted = history.length;
    rewrite = false;
  }

  function open(): Promise<{ changes: Change[]; problems: SessionProblem[] }> {
    opening ??= (async () => {
      const loaded = await store.load();
      history = loaded.messages;
      persisted = history.length;
      const repaired = repair(history, repairOptions);
      adopt(repaired);
      await persist();
      return { changes: repaired.changes, problems: loaded.problems };
    })().catch((error: unknown) => {
      opening = undefined;
      throw error;
    });
    return opening;
  }

  /** Leaves the history whole after a turn that stopped anywhere: open block answered, repaired, saved. */
  async function settle(): Promise<void> {
    if (openBlock !== undefined) {
      // The turn's signal is aborted by now: calls still running resolve at once as `cancelled`.
      const outcomes = await Promise.all(openBlock.pending);
      openBlock = undefined;
      history.push(...toolMessages(outcomes));
    }
    adopt(repair(history, repairOptions));
    await persist();
  }

  /**
   * The repair before every request. The first request of a turn repairs the whole history; later
   * ones repair the turn's own messages (from its last user message on) and check their call ids
   * against the rest, which was valid and has not changed since: the same result as a full repair
   * at a fraction of the cost on a long session. Anything found falls back to the full repair.
   */
  function prepareRequest(): { changed: boolean; changes: Change[] } {
    const state = verified;
    if (state !== undefined && state.array === history && history.length >= state.length) {
      const tailStart = lastUserIndex(history);
      if (tailStart >= 0 && tailStart === state.tailStart) {
        const tail = repair(history.slice(tailStart), { ...repairOptions, scope: 'request' });
        if (!tail.changed && !reusesIds(history, tailStart, state.priorIds)) {
          state.length = history.length;
          return { changed: false, changes: [] };
        }
      }
    }
    const full = repair(history, { ...repairOptions, scope: 'request' });
    adopt(full);
    const tailStart = lastUserIndex(history);
    verified = {
      array: history,
      length: history.length,
      priorIds: collectIds(history, 0, Math.max(0, tailStart)),
      tailStart,
    };
    return full;
  }

  function budgetTokens(): number {
    const window = options.contextWindow ?? defaultContextWindow(profile);
    const reserve = options.reserveTokens ?? Math.min(8192, Math.floor(window / 4));
    return window - reserve - Math.ceil(fixedChars / charsPerToken);
  }

  function windowFor(): RequestWindow {
    if (options.contextWindow === undefined) return { messages: history, omitted: 0, estimatedTokens: 0 };
    // After a compaction, requests carry the summary in place of the turns it covers.
    return selectWindow(compactedView(history).messages, budgetTokens(), charsPerToken);
  }

  const requestPath: RequestPath = { url, apiKey: options.apiKey, fetch: fetchImpl, idleTimeoutMs, retry, sleep };
  const compactor = createCompactor({
    history: () => history,
    async replace(next) {
      const before = { history, rewrite };
      history = next;
      rewrite = true;
      verified = undefined;
      try {
        await persist();
      } catch (error) {
        ({ history, rewrite } = before);
        throw error;
      }
    },
    path: requestPath,
    bodyFor: (messages) => {
      const body: Record<string, unknown> = { model: options.model, messages, stream };
      if (stream) body['stream_options'] = { include_usage: true };
      if (profile === 'deepseek' && options.thinking !== undefined)
        body['thinking'] = { type: thinking ? 'enabled' : 'disabled' };
      return body;
    },
    budgetTokens,
    charsPerToken: () => charsPerToken,
    tokensOf: (messages) => {
      let chars = fixedChars;
      for (const message of messages) chars += charsOf(message);
      return Math.ceil(chars / charsPerToken);
    },
    thinking,
    threshold: compactionThreshold(profile, options.compaction === false ? undefined : options.compaction),
    options: options.compaction === false ? {} : (options.compaction ?? {}),
  });
  const compaction = {
    enabled: options.contextWindow !== undefined && options.compaction !== false,
    auto: false,
    wanted: () => compactor.wanted(),
    run: compactor.run,
  };

  function requestBody(messages: readonly Message[]): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: options.model,
      messages: withSystemPrompt(messages, options.systemPrompt, systemFirstOnly),
      stream,
    };
    if (stream) body['stream_options'] = { include_usage: true };
    if (wireTools !== undefined) body['tools'] = wireTools;
    if (profile === 'deepseek' && options.thinking !== undefined)
      body['thinking'] = { type: thinking ? 'enabled' : 'disabled' };
    return body;
  }

  async function* turn(text: string, signal: AbortSignal): AsyncGenerator<AgentEvent> {
    const usage: Usage = { promptTokens: 0, completionTokens: 0 };
    let sawUsage = false;
    const end = (reason: 'stop' | 'error' | 'aborted'): AgentEvent =>
      sawUsage ? { type: 'turn-end', reason, usage: { ...usage } } : { type: 'turn-end', reason };

    const firstOpen = opening === undefined;
    const opened = await open();
    if (firstOpen && opened.changes.length > 0) yield { type: 'repair', changes: opened.changes };
    // Full-sequence repair first, then the user's message: nothing ever removes it afterwards.
    const before = repair(history, repairOptions);
    adopt(before);
    if (before.changed) yield { type: 'repair', changes: before.changes };
    history.push({ role: 'user', content: text });
    verified = undefined;
    await persist();
    compaction.auto = compaction.enabled;

    const failures = new Map<string, number>();
    for (let step = 0; ; step += 1) {
      if (signal.aborted) {
        yield end('aborted');
        return;
      }
      if (step >= maxSteps) {
        yield { type: 'error', message: `stopped after ${maxSteps} model requests in one turn` };
        yield end('error');
        return;
      }
      const prepared = prepareRequest();
      if (prepared.changed) {
        yield { type: 'repair', changes: prepared.changes };
        await persist();
      }

      if (compaction.auto && compaction.wanted()) {
        compaction.auto = false; // at most one attempt per turn: a failed one is not retried at every step
        yield* compaction.run(signal, false);
      }
      const outcome = yield* requestCompletion(requestPath, {
        signal,
        prepare: () => {
          const view = windowFor();
          return {
            body: requestBody(view.messages),
            events:
              view.omitted > 0
                ? [{ type: 'compact', omittedMessages: view.omitted, estimatedTokens: view.estimatedTokens }]
                : [],
            context: view,
          };
        },
        heal: async () => {
          const strongest = repair(history, { ...repairOptions, scope: 'request', level: 'strongest' });
          adopt(strongest);
          await persist();
          return [{ type: 'repair', changes: strongest.changes }];
        },
      });
      if (outcome.kind === 'aborted') {
        // The answer the user saw stays in the history, marked; its unfinished tool calls do not
        // (a call without its result would be a broken history).
        if (outcome.partial.text.trim() !== '') {
          history.push(
            toAssistantMessage(
              {
                text: `${outcome.partial.text}${INTERRUPTED}`,
                reasoning: outcome.partial.reasoning,
                toolCalls: [],
                finishReason: undefined,
                usage: undefined,
              },
              thinking,
            ),
          );
          await persist();
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
        if (options.contextWindow !== undefined) calibrate(view.messages, completion.usage.promptTokens);
      }

      const assistant = toAssistantMessage(completion, thinking);
      history.push(assistant);
      await persist();
      const calls = assistant.tool_calls ?? [];
      if (calls.length === 0) {
        yield end('stop');
        return;
      }

      const pending = startToolBlock(calls, tools, signal);
      openBlock = { pending };
      for (const call of calls)
        yield {
          type: 'tool-call-start',
          id: String(call.id),
          name: call.function?.name ?? '',
          arguments: call.function?.arguments ?? '',
        };
      const outcomes: ToolOutcome[] = [];
      for (const result of pending) {
        const outcome = await result;
        outcomes.push(outcome);
        yield {
          type: 'tool-call-end',
          id: outcome.id,
          name: outcome.name,
          result: outcome.result,
          isError: outcome.isError,
        };
      }
      openBlock = undefined;
      history.push(...toolMessages(outcomes));
      // Loop-breaking hints go after the whole block, never between its results.
      for (const outcome of outcomes) {
        if (!outcome.isError || outcome.result === CANCELLED) {
          failures.set(outcome.name, 0);
          continue;
        }
        const count = (failures.get(outcome.name) ?? 0) + 1;
        failures.set(outcome.name, count >= hintAfterFailures ? 0 : count);
        if (count >= hintAfterFailures) history.push(loopHint(outcome.name, count, hintRole));
      }
      await persist();
    }
  }

  function calibrate(messages: readonly Message[], promptTokens: number): void {
    if (promptTokens <= 0) return;
    let chars = fixedChars;
    for (const message of messages) chars += charsOf(message);
    charsPerToken = Math.min(6, Math.max(1, chars / promptTokens));
  }

  return {
    get messages() {
      return history;
    },
    open,
    async *compact(compactOptions = {}) {
      if (running) {
        yield { type: 'compaction-failed', message: 'a turn is running: compact when it is over' };
        return;
      }
      running = true;
      try {
        await open();
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
        yield* turn(text, controller.signal);
      } catch (error) {
        await settle().catch(() => undefined);
        yield { type: 'error', message: error instanceof Error ? error.message : String(error) };
        yield { type: 'turn-end', reason: 'error' };
      } finally {
        outer?.removeEventListener('abort', onAbort);
        controller.abort(new Error('turn over'));
        await settle().catch(() => undefined);
        running = false;
      }
    },
  };
}
