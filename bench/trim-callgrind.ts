import { trim } from '../src/index.js';
import { seedShapedHistory } from './support/seed-history.js';

/**
 * Instruction counts where wall time is too noisy: run under callgrind once per mode
 * (`none`, `parse`, `trim`) and subtract `none` (start-up, generating the history):
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null node --import tsx bench/trim-callgrind.ts parse 40
 * Each mode does the same warm-up of both, then REPETITIONS (default 40; argv[3]) of its own work;
 * the difference of two repetition counts cancels the tier-up compilation too.
 */
const mode = process.argv[2] ?? 'none';
const repetitions = Number(process.argv[3] ?? 40);
const history = seedShapedHistory();
const json = JSON.stringify(history);
for (let index = 0; index < 5; index += 1) {
  JSON.parse(json);
  trim(history, { maxTokens: 100_000, profile: 'deepseek' });
}
let sink = 0;
for (let index = 0; index < repetitions; index += 1) {
  if (mode === 'parse') sink += (JSON.parse(json) as unknown[]).length;
  else if (mode === 'trim') sink += trim(history, { maxTokens: 100_000, profile: 'deepseek' }).items.length;
}
console.log(mode, sink);
