#!/usr/bin/env node
import { createProcessIo, watchOutput } from './io.js';
import { run } from './run.js';

/** Commands that run until asked to stop: they get the first signal as `io.signal`. */
const RUNS_UNTIL_STOPPED = new Set(['proxy', 'emulate', 'chat']);

const io = createProcessIo();
const output = watchOutput(process.stdout, process.stderr);
const argv = process.argv.slice(2);
if (RUNS_UNTIL_STOPPED.has(argv[0] ?? '')) {
  const controller = new AbortController();
  io.signal = controller.signal;
  // The first SIGINT/SIGTERM asks the running command to stop cleanly (a proxy drains, a chat turn
  // is cancelled and saved); `once`, so a second Ctrl-C still ends the process at once.
  process.once('SIGTERM', () => controller.abort());
  process.once('SIGINT', () => controller.abort());
}
// Every other command (check, fix, convert) keeps the default: the first signal ends it. A rename
// is atomic, and a writer lock left by a killed process is taken over as stale.
process.exitCode = await output.settle(await run(argv, io));
