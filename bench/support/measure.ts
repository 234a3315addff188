/** Median wall time of `fn` in milliseconds, after warm-up; enough repetitions to last about `budgetMs`. */
export function medianMs(fn: () => unknown, budgetMs = 1500): number {
  for (let index = 0; index < 3; index += 1) fn();
  const samples: number[] = [];
  const started = performance.now();
  while (samples.length < 7 || (performance.now() - started < budgetMs && samples.length < 200)) {
    const start = performance.now();
    fn();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] as number;
}

export function machine(): string {
  return `${process.platform} ${process.arch}, ${(globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? '?'} cores, Node ${process.version}`;
}
