import { cpus } from 'node:os';
import { trim } from '../src/index.js';
import { medianMs } from './support/measure.js';
import { seedShapedHistory } from './support/seed-history.js';

/**
 * trim on a history shaped like NexForgeCLI's session-122357 (3,785 messages) against JSON.parse
 * of the same array (target <= 0.3x), with a 128k-token window's budget (100k tokens for the
 * history). Each round measures JSON.parse and then each trim mode, so the baseline and the
 * subject share the machine's noise; the ratio is taken per round and the median and spread over
 * the rounds are reported. Scale 30 shows it is linear.
 */
const rounds = Number(process.env['UNSTUCK_BENCH_ROUNDS'] ?? 7);
const rows: string[] = [];
const verdicts: string[] = [];

for (const scale of [1, 30]) {
  const history = seedShapedHistory(scale);
  const json = JSON.stringify(history);
  const budget = 100_000;
  const modes = [
    ['drop', () => trim(history, { maxTokens: budget, profile: 'deepseek' })],
    ['placeholder', () => trim(history, { maxTokens: budget * scale * 2, profile: 'deepseek', mode: 'placeholder' })],
  ] as const;
  const ratios: Record<string, number[]> = { drop: [], placeholder: [] };
  const times: Record<string, number[]> = { parse: [], drop: [], placeholder: [] };
  for (let round = 0; round < rounds; round += 1) {
    const parse = medianMs(() => JSON.parse(json), 400);
    times['parse']!.push(parse);
    for (const [mode, run] of modes) {
      const ms = medianMs(run, 400);
      times[mode]!.push(ms);
      ratios[mode]!.push(ms / parse);
    }
  }
  const drop = modes[0][1]();
  const placeheld = modes[1][1]();
  const name = `${history.length} messages, ${(json.length / 1e6).toFixed(2)} M chars`;
  for (const [mode, result] of [
    ['drop', drop],
    ['placeholder', placeheld],
  ] as const) {
    const what = mode === 'drop' ? `${result.omitted.length} left out` : `${result.cleared.length} results cleared`;
    rows.push(
      `| ${name} | ${mode} (${what}) | ${median(times['parse']!).toFixed(2)} | ${median(times[mode]!).toFixed(3)} | ${median(ratios[mode]!).toFixed(3)}x (${Math.min(...ratios[mode]!).toFixed(3)}-${Math.max(...ratios[mode]!).toFixed(3)}) |`,
    );
    if (scale === 1)
      verdicts.push(
        `- ${median(ratios[mode]!) <= 0.3 ? 'meets' : 'MISSES'} target 0.3x: trim ${mode}, ${name} = ${median(ratios[mode]!).toFixed(3)}x`,
      );
  }
}

console.log('## core: trim vs JSON.parse (profile deepseek, 100k-token budget)\n');
console.log(
  `${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'unknown cpu'} (${cpus().length} cores), Node ${process.version}; \`node --import tsx bench/trim.bench.ts\`, ${rounds} interleaved rounds\n`,
);
console.log('| history | mode | JSON.parse ms | trim ms | ratio, median (min-max over rounds) |');
console.log('|---|---|---|---|---|');
for (const row of rows) console.log(row);
console.log('');
for (const verdict of verdicts) console.log(verdict);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}
