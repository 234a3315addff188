import { check, repair } from '../src/index.js';
import { type WideShape, wideBlock } from './support/wide-block.js';

/**
 * The 10^5/10^4 ratio of bench/core-wide.bench.ts by instruction count, where wall time also
 * measures the memory hierarchy (10^5 calls outgrow the caches) and the machine's neighbours:
 *
 *   valgrind --tool=callgrind node --import tsx bench/core-wide-callgrind.ts N RUNS FUNCTION SHAPE
 *
 * for N = 10000 and 100000, RUNS = 1 and 3; (count(N, 3) - count(N, 1)) / 2 is one warm run (start-up,
 * building the block and the first, compiling run cancel out). FUNCTION: check | repair; SHAPE: clean |
 * damaged | constant-id | no-ids.
 */
const [calls, runs, name, shape] = [
  Number(process.argv[2]),
  Number(process.argv[3]),
  process.argv[4],
  (process.argv[5] ?? 'clean') as WideShape,
];
if (!Number.isSafeInteger(calls) || !Number.isSafeInteger(runs) || (name !== 'check' && name !== 'repair')) {
  console.error('usage: core-wide-callgrind.ts CALLS RUNS check|repair [clean|damaged|constant-id|no-ids]');
  process.exit(2);
}
const block = wideBlock(calls, shape);
const run = name === 'check' ? () => check(block, { profile: 'openai' }) : () => repair(block, { profile: 'openai' });
for (let index = 0; index < runs; index += 1) run();
