import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

/**
 * `npm run bench`: every bench/*.bench.ts, one after another, each in its own process so one
 * benchmark's heap and JIT state do not colour the next. `npm run bench -- core` runs the ones
 * whose name contains "core".
 */
const filter = process.argv[2];
const benches = readdirSync(new URL('.', import.meta.url))
  .filter((name) => name.endsWith('.bench.ts') && (filter === undefined || name.includes(filter)))
  .sort();
let failed = 0;
for (const name of benches) {
  console.error(`\n# ${name}`);
  const result = spawnSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', new URL(name, import.meta.url).pathname],
    { stdio: 'inherit' },
  );
  if (result.status !== 0) failed += 1;
}
process.exitCode = failed === 0 ? 0 : 1;
