#!/usr/bin/env node
import { createProcessIo } from './io.js';
import { run } from './run.js';

const io = createProcessIo();
const controller = new AbortController();
io.signal = controller.signal;
// The first SIGINT/SIGTERM asks the running command to stop cleanly (a proxy drains, a chat turn
// is cancelled and saved); `once`, so a second Ctrl-C still ends the process at once.
process.once('SIGTERM', () => controller.abort());
process.once('SIGINT', () => controller.abort());
process.exitCode = await run(process.argv.slice(2), io);
