/**
 * One of the concurrent writers of bench/db.bench.ts: opens its own session (3,785 messages,
 * written before it says `ready`), waits for `go` on stdin, then appends one agent step after another
 * for DURATION_MS and prints how many it made.
 *
 *   db-writer-child KIND(sqlite|postgres|json) TARGET SESSION DURATION_MS
 */
import { join } from 'node:path';
import { writeFileAtomic } from '../src/session/atomic-write.js';
import { createPostgresStore, createSqliteStore } from '../src/session/index.js';
import { seedLikeSession } from './session-fixtures.js';

const [kind, target, session, duration] = process.argv.slice(2);
if (kind === undefined || target === undefined || session === undefined || duration === undefined)
  throw new Error('usage: db-writer-child KIND TARGET SESSION DURATION_MS');
const messages = seedLikeSession(1);
const step = messages.slice(-3);
let appendStep: () => Promise<void>;
let done: () => Promise<void> = async () => undefined;
if (kind === 'json') {
  // The durable JSON file: the whole session written again (write, fsync, rename, directory fsync) per step.
  const file = join(target, `${session}.json`);
  const history = messages.slice();
  appendStep = async () => {
    history.push(...step);
    await writeFileAtomic(file, Buffer.from(JSON.stringify(history)));
  };
} else {
  const store = kind === 'sqlite' ? createSqliteStore(target, { session }) : createPostgresStore(target, { session });
  await store.load();
  await store.save(messages);
  appendStep = () => store.append!(step);
  done = () => store.close();
}
process.stdout.write('ready\n');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
const deadline = performance.now() + Number(duration);
let count = 0;
while (performance.now() < deadline) {
  await appendStep();
  count += 1;
}
await done();
process.stdout.write(`${count}\n`);
