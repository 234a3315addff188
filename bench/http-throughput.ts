import autocannon from 'autocannon';
import { percentile } from './http-fixtures.js';

/**
 * Throughput of several proxies against each other on a noisy shared machine: many short rounds,
 * every target once per round, the order rotated each round (the first of a round meets a different
 * neighbour load than the last), after one discarded warm-up round. What is compared is the ratio
 * within each round, never rates from different moments; the summary gives its median and its
 * spread (quartiles, min-max) and how many rounds fell under the target.
 */
export interface ThroughputTarget {
  name: string;
  url: string;
  /** The target process's CPU time so far (µs), when it can say. */
  cpu?: () => Promise<number>;
}

export interface ThroughputRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
  connections?: number;
}

export interface RoundResult {
  rps: number;
  /** µs of the target's own CPU per request (NaN when it cannot say). */
  cpuPerRequest: number;
  errors: number;
}

export const THROUGHPUT_ROUNDS = Number(process.env.UNSTUCK_BENCH_ROUNDS ?? 11);
export const THROUGHPUT_SECONDS = Number(process.env.UNSTUCK_BENCH_SECONDS ?? 1.5);

async function once(target: ThroughputTarget, request: ThroughputRequest, seconds: number): Promise<RoundResult> {
  const before = target.cpu === undefined ? Number.NaN : await target.cpu();
  const result = await autocannon({
    url: `${target.url}${request.path}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...request.headers },
    body: request.body,
    connections: request.connections ?? 64,
    duration: seconds,
  });
  const after = target.cpu === undefined ? Number.NaN : await target.cpu();
  const errors = result.errors + result.timeouts + result.non2xx;
  if (errors > 0)
    console.error(`${target.name}: errors ${result.errors}, timeouts ${result.timeouts}, non-2xx ${result.non2xx}`);
  return {
    rps: result.requests.total / seconds,
    cpuPerRequest: (after - before) / Math.max(1, result.requests.total),
    errors,
  };
}

/** Every target once per round, in an order rotated round by round; one warm-up round first, not counted. */
export async function interleavedThroughput(
  targets: readonly ThroughputTarget[],
  request: ThroughputRequest,
  options: { rounds?: number; seconds?: number } = {},
): Promise<Map<string, RoundResult[]>> {
  const rounds = options.rounds ?? THROUGHPUT_ROUNDS;
  const seconds = options.seconds ?? THROUGHPUT_SECONDS;
  const results = new Map<string, RoundResult[]>(targets.map((target) => [target.name, []]));
  for (const target of targets) await once(target, request, Math.min(1, seconds));
  for (let round = 0; round < rounds; round += 1) {
    for (let step = 0; step < targets.length; step += 1) {
      const target = targets[(round + step) % targets.length] as ThroughputTarget;
      results.get(target.name)?.push(await once(target, request, seconds));
    }
  }
  return results;
}

/** Per-round ratios of `ours` to `base` (same round), by req/s. */
export function ratiosOf(ours: readonly RoundResult[], base: readonly RoundResult[]): number[] {
  return ours.map((result, index) => result.rps / (base[index]?.rps ?? Number.NaN));
}

/** Per-round ratios by CPU per request (base / ours: above 1 means ours costs less). */
export function cpuRatiosOf(ours: readonly RoundResult[], base: readonly RoundResult[]): number[] {
  return ours.map((result, index) => (base[index]?.cpuPerRequest ?? Number.NaN) / result.cpuPerRequest);
}

/** `median 0.93x (quartiles 0.88-0.97, min-max 0.71-1.10; 2 of 11 rounds under 0.9x)`. */
export function describeRatios(ratios: readonly number[], target: number): string {
  const values = [...ratios];
  const under = values.filter((value) => value < target).length;
  const x = (value: number): string => `${value.toFixed(2)}x`;
  return `median ${x(percentile(values, 50))} (quartiles ${x(percentile(values, 25))}-${x(percentile(values, 75))}, min-max ${x(Math.min(...values))}-${x(Math.max(...values))}; ${under} of ${values.length} rounds under ${target}x)`;
}

export function totalErrors(results: Map<string, RoundResult[]>): number {
  let errors = 0;
  for (const rounds of results.values()) for (const round of rounds) errors += round.errors;
  return errors;
}
