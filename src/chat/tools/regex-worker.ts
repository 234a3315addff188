import { Worker } from 'node:worker_threads';

/** How long one search's regular expression may run in all, by default. */
export const DEFAULT_REGEX_TIME_MS = 5000;

/**
 * The worker's whole program, plain JavaScript so it needs no loader: it tests each line of a
 * text against the pattern and answers the indexes of the lines that match (at most `limit`).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const expression = new RegExp(workerData.source, workerData.flags);
parentPort.on('message', ({ text, limit }) => {
  const lines = text.split('\\n');
  const found = [];
  for (let index = 0; index < lines.length && found.length < limit; index += 1) if (expression.test(lines[index])) found.push(index);
  parentPort.postMessage(found);
});
`;

export interface RegexMatcher {
  /** Indexes of the lines of `text` that match, at most `limit`. Rejects when time runs out or `signal` aborts. */
  matchLines(text: string, limit: number, signal: AbortSignal): Promise<number[]>;
  close(): Promise<void>;
}

/**
 * A model-supplied regular expression runs on a worker thread, never on the chat's event loop:
 * a backtracking pattern such as `(a+)+$` can take exponential time in V8's engine, and only a
 * thread can be stopped in the middle of one match (`terminate()` interrupts it). The time is
 * counted over the whole search; when it runs out, or the turn is aborted, the worker is
 * terminated and the search fails with one sentence. See docs/decisions/chat-regex-worker.md.
 */
export function createRegexMatcher(
  source: string,
  options: { flags?: string; timeLimitMs?: number } = {},
): RegexMatcher {
  const limitMs = options.timeLimitMs ?? DEFAULT_REGEX_TIME_MS;
  let worker: Worker | undefined;
  let spentMs = 0;
  let failed: Error | undefined;
  const stop = (): void => {
    void worker?.terminate();
    worker = undefined;
  };
  const start = (): Worker => {
    // execArgv: [] keeps a loader such as tsx out of the worker: it runs plain JavaScript.
    const created = new Worker(WORKER_SOURCE, {
      eval: true,
      execArgv: [],
      workerData: { source, flags: options.flags ?? '' },
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    created.unref();
    return created;
  };
  return {
    matchLines(text, limit, signal) {
      if (failed !== undefined) return Promise.reject(failed);
      signal.throwIfAborted();
      worker ??= start();
      const current = worker;
      const began = Date.now();
      return new Promise<number[]>((resolve, reject) => {
        const finish = (error: Error | undefined, found?: number[]): void => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          current.off('message', onMessage);
          current.off('error', onError);
          spentMs += Date.now() - began;
          if (error === undefined) {
            resolve(found ?? []);
            return;
          }
          failed = error;
          stop();
          reject(error);
        };
        const onMessage = (found: number[]): void => finish(undefined, found);
        const onError = (error: Error): void => finish(new Error(`the regular expression failed: ${error.message}`));
        const onAbort = (): void => finish(new Error('the search was stopped: the turn was aborted'));
        const timer = setTimeout(
          () =>
            finish(
              new Error(
                `the regular expression ran for more than ${limitMs} ms and was stopped (nested repetition such as (a+)+ backtracks exponentially; use a simpler pattern or a plain-text search)`,
              ),
            ),
          Math.max(0, limitMs - spentMs),
        );
        signal.addEventListener('abort', onAbort, { once: true });
        current.on('message', onMessage);
        current.on('error', onError);
        current.postMessage({ text, limit });
      });
    },
    async close() {
      const current = worker;
      worker = undefined;
      await current?.terminate();
    },
  };
}
