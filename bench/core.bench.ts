import { cpus } from 'node:os';
import { check, type Message, repair } from '../src/index.js';
import { medianMs } from './support/measure.js';
import { corrupt, seedShapedHistory } from './support/seed-history.js';

/**
 * check and repair against JSON.parse of the same array, in the same run. Targets:
 * check <= 0.25x, repair of a clean history <= 0.3x, of a 5%-corrupted one <= 0.6x, linear in size.
 */
const profile = 'deepseek' as const;
const rows: string[] = [];
const results: { name: string; ratio: number; target: number }[] = [];

for (const scale of [1, 30]) {
  const clean = seedShapedHistory(scale);
  const damaged = corrupt(clean, 0.05);
  for (const [label, messages] of [
    ['clean', clean],
    ['5% corrupted', damaged],
  ] as [string, Message[]][]) {
    const json = JSON.stringify(messages);
    const parse = medianMs(() => JSON.parse(json));
    const checkMs = medianMs(() => check(messages, { profile }));
    const repairMs = medianMs(() => repair(messages, { profile }));
    const violations = check(messages, { profile }).length;
    // The part of repair that makes `remaining` exact: a full check of the repaired output.
    const repaired = repair(messages, { profile }).messages;
    const finalCheckMs = repaired === messages ? 0 : medianMs(() => check(repaired, { profile }));
    const name = `${messages.length} messages, ${(json.length / 1e6).toFixed(2)} M chars, ${label}`;
    rows.push(
      `| ${name} | ${violations} | ${parse.toFixed(2)} | ${checkMs.toFixed(2)} (${(checkMs / parse).toFixed(3)}x) | ${repairMs.toFixed(2)} (${(repairMs / parse).toFixed(3)}x) | ${finalCheckMs === 0 ? '-' : finalCheckMs.toFixed(2)} |`,
    );
    results.push({ name: `check, ${name}`, ratio: checkMs / parse, target: 0.25 });
    results.push({ name: `repair, ${name}`, ratio: repairMs / parse, target: label === 'clean' ? 0.3 : 0.6 });
  }
}

console.log(`## core: check and repair vs JSON.parse (profile ${profile})\n`);
console.log(
  `${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'unknown cpu'} (${cpus().length} cores), Node ${process.version}; \`node --import tsx bench/core.bench.ts\`\n`,
);
console.log(
  '| history | violations | JSON.parse ms | check ms (ratio) | repair ms (ratio) | of which final check ms |',
);
console.log('|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
console.log('');
for (const result of results)
  console.log(
    `- ${result.ratio <= result.target ? 'meets' : 'MISSES'} target ${result.target}x: ${result.name} = ${result.ratio.toFixed(3)}x`,
  );
