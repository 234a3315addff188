import type { Change, Message, ProfileName, RuleId } from '../core/index.js';
import type { SessionProblem, SessionStore } from '../session/index.js';
import type { CompactionOptions } from './compact-history.js';

/**
 * A tool the model may call. `run` may throw: the runner turns any failure into an error result.
 *
 * How the calls of one assistant message run: in the model's order, each call with side effects
 * alone (it starts after every earlier call of the block has finished, and nothing starts until it
 * has), while consecutive read-only calls run concurrently. Results go back in call order, one per
 * call, whatever order the calls finish in.
 */
export interface Tool {
  name: string;
  description: string;
  /** JSON schema of the arguments object. */
  parameters: object;
  /**
   * `true` when the tool only reads (no file written, no command run, nothing sent anywhere):
   * the runner may then run it at the same time as the other read-only calls next to it.
   * Absent or anything but `true`: the tool has side effects and runs alone.
   */
  readOnly?: boolean;
  run(args: unknown, context: { signal: AbortSignal }): Promise<string>;
}

export interface RetryOptions {
  /** Retries after the first attempt for a transient failure (429, 5xx, network, timeout). Default 4. */
  maxRetries?: number;
  /** First backoff delay; doubled per retry. Default 500 ms. */
  baseDelayMs?: number;
  /** Cap on any one delay, a Retry-After header included. Default 20 s. */
  maxDelayMs?: number;
}

export interface AgentOptions {
  baseURL: string;
  apiKey: string;
  model: string;
  /** Whose rules the history is kept valid for. Default `openai`. */
  profile?: ProfileName;
  /** The tools the model may call. Consecutive `readOnly` calls of a block run concurrently; every other call runs alone, in the model's order. */
  tools?: Tool[];
  /** Where the history is saved after every step. Default: in memory. */
  session?: SessionStore;
  systemPrompt?: string;
  /** The model's context window in tokens: older turns are left out of requests to stay under it. */
  contextWindow?: number;
  /** Tokens kept free for the answer when `contextWindow` is set. Default a quarter of it, at most 8192. */
  reserveTokens?: number;
  /**
   * With `contextWindow` set, the oldest turns are summarized by the model once a request would pass
   * a threshold of the window; the session keeps every message and the summary. `false`: never
   * (requests then only leave the oldest turns out).
   */
  compaction?: CompactionOptions | false;
  fetch?: typeof fetch;
  /** Stream the answer (SSE). Default true. */
  stream?: boolean;
  /** Thinking mode (DeepSeek, Kimi): keep and send back reasoning_content. Default: the profile's default for the model. */
  thinking?: boolean;
  retry?: RetryOptions;
  /** Gives up on a request when no byte arrives for this long (a stall), then retries. Default 120 s. */
  idleTimeoutMs?: number;
  /** Model requests per turn before the turn is stopped. Default 64. */
  maxSteps?: number;
  /** Consecutive failures of one tool before a loop-breaking hint is added. Default 3. */
  hintAfterFailures?: number;
  /** Injectable for tests: how the runner waits between retries. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export interface Agent {
  readonly messages: readonly Message[];
  /** Loads and repairs the session, saying what was repaired. `runTurn` calls it when you did not. */
  open(): Promise<{ changes: Change[]; problems: SessionProblem[] }>;
  /** Never throws: every failure is an `error` event followed by `turn-end`. */
  runTurn(text: string, options?: { signal?: AbortSignal }): AsyncIterable<AgentEvent>;
  /** Summarizes the oldest turns now (`/compact`), keeping the newest; never throws. */
  compact?(options?: { signal?: AbortSignal }): AsyncIterable<AgentEvent>;
}

export type AgentEvent =
  | { type: 'repair'; changes: Change[] }
  | { type: 'compact'; omittedMessages: number; estimatedTokens: number }
  | { type: 'compaction-start'; messages: number; estimatedTokens: number }
  | { type: 'compaction-end'; messages: number; tokensBefore: number; tokensAfter: number; savedTokens: number }
  | { type: 'compaction-failed'; message: string }
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  | { type: 'tool-call-start'; id: string; name: string; arguments: string }
  | { type: 'tool-call-end'; id: string; name: string; result: string; isError: boolean }
  | { type: 'retry'; reason: string; attempt: number; delayMs: number }
  | { type: 'error'; message: string; rule?: RuleId; status?: number }
  | {
      type: 'turn-end';
      reason: 'stop' | 'error' | 'aborted';
      usage?: { promptTokens: number; completionTokens: number };
    };
