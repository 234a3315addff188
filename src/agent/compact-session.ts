import type { Message } from '../core/index.js';
import type { CompactionOptions } from './compact-history.js';
import {
  COMPACTION_DEFAULTS,
  compactedView,
  planCompaction,
  summaryPair,
  summaryRequestMessages,
  transcriptChunks,
} from './compact-history.js';
import type { RequestPath } from './request-completion.js';
import { requestCompletion } from './request-completion.js';
import type { AgentEvent } from './types.js';

/** What the compactor needs of the runner it serves. */
export interface CompactorHost {
  history(): readonly Message[];
  /** Puts the compacted history in place and saves it; on a failed save the history is put back and it throws. */
  replace(next: Message[]): Promise<void>;
  path: RequestPath;
  /** A request body for these messages: the runner's model and options, no tools. */
  bodyFor(messages: readonly Message[]): Record<string, unknown>;
  /** The budget of one request in tokens (window minus reserve, system prompt and tools). */
  budgetTokens(): number;
  charsPerToken(): number;
  /** Estimated tokens of what a request carrying these messages costs. */
  tokensOf(messages: readonly Message[]): number;
  thinking: boolean;
  threshold: number;
  options: CompactionOptions;
}

export interface Compactor {
  /** Whether what the next request would carry has passed the threshold. */
  wanted(): boolean;
  /** Summarizes the oldest turns; never throws: how it went is in the events. */
  run(signal: AbortSignal, manual: boolean): AsyncGenerator<AgentEvent, void>;
}

/**
 * Compaction by summary on top of the runner's own request path (same retries, same heal). The
 * oldest turns are read to the model as plain text, in as many requests as the window needs (each
 * carrying the summary so far); the summary then goes into the history as a user/assistant pair
 * where those turns end. All or nothing: any failure leaves the history and the session untouched.
 */
export function createCompactor(host: CompactorHost): Compactor {
  const keep = host.options.keep ?? COMPACTION_DEFAULTS.keep;
  const maxResultChars = host.options.maxResultChars ?? COMPACTION_DEFAULTS.maxResultChars;
  return {
    wanted() {
      return host.tokensOf(compactedView(host.history()).messages) > host.threshold * host.budgetTokens();
    },
    async *run(signal, manual) {
      const history = host.history();
      const budget = host.budgetTokens();
      // A window smaller than the fixed part of every request leaves no budget: keep nothing old, never a negative count.
      const plan = planCompaction(history, {
        keepTokens: Math.max(0, Math.floor(keep * budget)),
        charsPerToken: host.charsPerToken(),
        manual,
      });
      if (plan === undefined) {
        if (manual)
          yield {
            type: 'compaction-failed',
            message: 'nothing to compact yet: there is no whole turn before the newest one',
          };
        return;
      }
      const tokensBefore = host.tokensOf(compactedView(history).messages);
      const covered = history.slice(plan.previous === undefined ? plan.from : plan.from + 2, plan.cut);
      yield { type: 'compaction-start', messages: covered.length, estimatedTokens: tokensBefore };
      // Each request: the instructions, the summary so far, and a chunk; room is left for the summary both ways.
      const chunkChars = Math.max(2_000, Math.floor(budget * 0.6 * host.charsPerToken()));
      const chunks = transcriptChunks(covered, { chunkChars, maxResultChars });
      let summary = plan.previous;
      for (const [index, chunk] of chunks.entries()) {
        const body = host.bodyFor(summaryRequestMessages(summary, chunk, { part: index + 1, parts: chunks.length }));
        const outcome = yield* requestCompletion(host.path, {
          signal,
          quiet: true,
          prepare: () => ({ body, events: [], context: undefined }),
          heal: async () => [],
        });
        if (outcome.kind === 'aborted') {
          yield { type: 'compaction-failed', message: 'aborted; the history is as it was' };
          return;
        }
        if (outcome.kind === 'failed') {
          yield {
            type: 'compaction-failed',
            message: `${outcome.event.type === 'error' ? outcome.event.message : 'the request failed'}; the history is as it was`,
          };
          return;
        }
        const text = outcome.completion.text.trim();
        if (text === '') {
          yield { type: 'compaction-failed', message: 'the model gave no summary; the history is as it was' };
          return;
        }
        summary = text;
      }
      if (summary === undefined) return;
      const next = [
        ...history.slice(0, plan.cut),
        ...summaryPair(summary, { from: 0, to: plan.cut }, host.thinking),
        ...history.slice(plan.cut),
      ];
      const tokensAfter = host.tokensOf(compactedView(next).messages);
      if (tokensAfter >= tokensBefore) {
        yield {
          type: 'compaction-failed',
          message: `the summary is not shorter than the ${covered.length} messages it would replace; the history is as it was`,
        };
        return;
      }
      try {
        await host.replace(next);
      } catch (error) {
        yield {
          type: 'compaction-failed',
          message: `${error instanceof Error ? error.message : String(error)}; the history is as it was`,
        };
        return;
      }
      yield {
        type: 'compaction-end',
        messages: covered.length,
        tokensBefore,
        tokensAfter,
        savedTokens: Math.max(0, tokensBefore - tokensAfter),
      };
    },
  };
}
