/**
 * A second process for writer-lock.test.ts.
 *   hold PATH TAG COUNT: append COUNT messages one by one under the lock, logging when it holds it.
 *   try PATH TIMEOUT_MS: try to save; print the error code and message if the lock is not given.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isUnstuckError } from '../../src/core/errors.js';
import { createJournalStore } from '../../src/session/index.js';

const [mode, path, argument, count] = process.argv.slice(2);
if (path === undefined || argument === undefined) throw new Error('usage: lock-child MODE PATH ARG [COUNT]');
if (mode === 'hold') {
  const store = createJournalStore(path, { lockTimeoutMs: 20_000 });
  for (let index = 0; index < Number(count); index += 1) {
    await store.append!([{ role: 'user', content: `${argument} ${index}` }]);
    if (index === 0) process.stdout.write(`acquired ${Date.now()}\n`);
    await sleep(1);
  }
  process.stdout.write(`releasing ${Date.now()}\n`);
  await store.close();
} else {
  const store = createJournalStore(path, { lockTimeoutMs: Number(argument) });
  try {
    await store.save([{ role: 'user', content: 'second writer' }]);
    process.stdout.write('saved\n');
    await store.close();
  } catch (error) {
    process.stdout.write(`${isUnstuckError(error) ? error.code : 'other'}: ${(error as Error).message}\n`);
    process.exitCode = 3;
  }
}
