/**
 * A writer that saves (or appends) in a loop until it is killed, printing the number of each
 * save once it has resolved. Run by crash.test.ts, bundled so it starts in milliseconds.
 */
import { createJournalStore, createTranscriptStore } from '../../src/session/index.js';
import { journalLine, sessionVersion } from './crash-versions.js';

const [mode, path, first] = process.argv.slice(2);
if (mode === undefined || path === undefined || first === undefined)
  throw new Error('usage: crash-child MODE PATH FIRST');
const store = mode.startsWith('journal')
  ? createJournalStore(path, { lockTimeoutMs: 10_000 })
  : createTranscriptStore(path, { segmentMessages: mode === 'segments' ? 4 : 1000, lockTimeoutMs: 10_000 });
for (let number = Number(first); ; number += 1) {
  if (mode === 'journal-append') await store.append!([journalLine(number)]);
  else await store.save(sessionVersion(number));
  process.stdout.write(`${number}\n`);
}
