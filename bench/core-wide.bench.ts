import { cpus } from 'node:os';
import { check, type Message, repair } from '../src/index.js';
import { type WideShape, wideBlock } from './support/wide-block.js';

/**
 * Check and repair of ONE assistant message with 10^4 and 10^5 parallel calls
 * (and their results), and the 10^5/10^4 ratio: linear is ~10, the target is <= 12 (the quadratic
 * search this replaced gave ~65 for check and ~85 for repair). Each figure is the median of 5 runs,
 * with a full GC before each, the two sizes interleaved round by round.
 */
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const profile = 'openai' as const;
const rounds = 5;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function time(run: () => unknown): number {
  gc();
  const started = performance.now();
  run();
  return performance.now() - started;
}

const rows: string[] = [];
const verdicts: string[] = [];
for (const shape of ['clean', 'damaged', 'constant-id', 'no-ids'] as WideShape[]) {
  const small = wideBlock(10_000, shape);
  const large = wideBlock(100_000, shape);
  for (const [name, run] of [
    ['check', (messages: Message[]) => check(messages, { profile })],
    ['repair', (messages: Message[]) => repair(messages, { profile })],
  ] as const) {
    run(small);
    run(large);
    const smallMs: number[] = [];
    const largeMs: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      smallMs.push(time(() => run(small)));
      largeMs.push(time(() => run(large)));
    }
    const ratio = median(largeMs) / median(smallMs);
    const spread = `${Math.min(...largeMs).toFixed(0)}-${Math.max(...largeMs).toFixed(0)}`;
    rows.push(
      `| ${shape} | ${name} | ${median(smallMs).toFixed(1)} | ${median(largeMs).toFixed(1)} (${spread}) | ${ratio.toFixed(1)} |`,
    );
    verdicts.push(
      `- ${ratio <= 12 ? 'meets' : 'MISSES'} target <= 12: ${name}, ${shape}, 10^5/10^4 = ${ratio.toFixed(1)}`,
    );
  }
}

console.log(`## core: one message with 10^5 tool calls (profile ${profile})\n`);
console.log(
  `${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'unknown cpu'} (${cpus().length} cores), Node ${process.version}; \`node --expose-gc --import tsx bench/core-wide.bench.ts\`\n`,
);
console.log('| block | function | 10^4 calls ms | 10^5 calls ms (min-max) | 10^5/10^4 |');
console.log('|---|---|---|---|---|');
for (const row of rows) console.log(row);
console.log('');
for (const verdict of verdicts) console.log(verdict);
