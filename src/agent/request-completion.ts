import type { ErrorClassification } from '../core/index.js';
import { classifyError, isHealableRule } from '../core/index.js';
import type { Completion } from './stream-completion.js';
import { streamCompletion } from './stream-completion.js';
import type { AgentEvent } from './types.js';
import type { WireFailure } from './wire-error.js';
import { describeFailure, errorText, isTransient, WireError } from './wire-error.js';

export interface RequestPath {
  url: string;
  apiKey: string;
  fetch: typeof fetch;
  idleTimeoutMs: number;
  retry: { maxRetries: number; baseDelayMs: number; maxDelayMs: number };
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

export interface CompletionAttempts<C> {
  /**
   * The body of the next attempt, the events to emit before it, and what it was built from (handed
   * back with the answer). Rebuilt per attempt: a heal changes the history.
   */
  prepare(): { body: Record<string, unknown>; events: AgentEvent[]; context: C };
  /** Called once on a 400 naming a pairing rule: repairs what the body is built from, returns the events to emit. */
  heal(rule: string): Promise<AgentEvent[]>;
  /** Text and reasoning deltas are not emitted (a compaction's summary is not the answer). */
  quiet?: boolean;
  signal: AbortSignal;
}

/** What an attempt streamed before it was aborted: the runner keeps the text the user saw. */
export interface PartialAnswer {
  text: string;
  reasoning: string;
}

export type CompletionOutcome<C> =
  | { kind: 'done'; completion: Completion; context: C }
  | { kind: 'aborted'; partial: PartialAnswer }
  | { kind: 'failed'; event: AgentEvent };

/**
 * One model request as the runner makes it: transient failures (429, 5xx, network, stall) retried
 * with backoff and Retry-After, and one heal-and-retry on a 400 that names a pairing rule. Yields
 * the deltas and the retry/repair events as they happen and returns how it ended; never throws for
 * a wire failure.
 */
export async function* requestCompletion<C>(
  path: RequestPath,
  attempts: CompletionAttempts<C>,
): AsyncGenerator<AgentEvent, CompletionOutcome<C>> {
  const { signal } = attempts;
  let healed = false;
  let attempt = 0;
  for (;;) {
    const { body, events, context } = attempts.prepare();
    yield* events;
    let completion: Completion | undefined;
    let failure: WireFailure | undefined;
    const partial: PartialAnswer = { text: '', reasoning: '' };
    const request = streamCompletion({
      url: path.url,
      apiKey: path.apiKey,
      body,
      fetch: path.fetch,
      signal,
      idleTimeoutMs: path.idleTimeoutMs,
    });
    try {
      for (;;) {
        const next = await request.next();
        if (next.done === true) {
          completion = next.value;
          break;
        }
        partial[next.value.type === 'text' ? 'text' : 'reasoning'] += next.value.text;
        if (attempts.quiet !== true)
          yield next.value.type === 'text'
            ? { type: 'text-delta', text: next.value.text }
            : { type: 'reasoning-delta', text: next.value.text };
      }
    } catch (error) {
      failure =
        error instanceof WireError
          ? error.failure
          : { kind: 'protocol', detail: error instanceof Error ? error.message : String(error) };
    } finally {
      await request.return(undefined as never);
    }
    if (completion !== undefined) return { kind: 'done', completion, context };
    if (failure === undefined || failure.kind === 'aborted' || signal.aborted) return { kind: 'aborted', partial };
    const classified = failure.kind === 'http' ? classifyError(failure.status, failure.body) : undefined;
    if (classified !== undefined && isHealableRule(classified.rule) && !healed) {
      healed = true;
      yield* await attempts.heal(classified.rule);
      yield {
        type: 'retry',
        reason: `the provider rejected the history (${classified.rule}); repaired it, retrying once`,
        attempt: 1,
        delayMs: 0,
      };
      continue;
    }
    if (classified === undefined && isTransient(failure) && attempt < path.retry.maxRetries) {
      attempt += 1;
      const delayMs = Math.min(
        path.retry.maxDelayMs,
        Math.max(
          failure.kind === 'http' ? (failure.retryAfterMs ?? 0) : 0,
          path.retry.baseDelayMs * 2 ** (attempt - 1),
        ),
      );
      yield { type: 'retry', reason: describeFailure(failure), attempt, delayMs };
      try {
        await path.sleep(delayMs, signal);
      } catch {
        return { kind: 'aborted', partial: { text: '', reasoning: '' } };
      }
      continue;
    }
    return { kind: 'failed', event: failureEvent(failure, classified, healed, attempt) };
  }
}

function failureEvent(
  failure: WireFailure,
  classified: ErrorClassification | undefined,
  healed: boolean,
  attempts: number,
): AgentEvent {
  if (failure.kind !== 'http')
    return {
      type: 'error',
      message: `${describeFailure(failure)}${attempts > 0 ? ` (gave up after ${attempts} retries)` : ''}`,
    };
  const prefix =
    classified !== undefined && healed
      ? 'the provider still rejects the history after a repair and one retry'
      : attempts > 0
        ? `the provider kept failing (gave up after ${attempts} retries)`
        : 'the provider rejected the request';
  const event: AgentEvent = {
    type: 'error',
    message: `${prefix}: HTTP ${failure.status}: ${errorText(failure.body)}`,
    status: failure.status,
  };
  if (classified !== undefined) event.rule = classified.rule;
  return event;
}
