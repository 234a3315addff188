#!/usr/bin/env node
import { createProcessIo } from './io.js';
import { run } from './run.js';

const io = createProcessIo();
const controller = new AbortController();
io.signal = controller.signal;
process.once('SIGTERM', () => controller.abort());
process.exitCode = await run(process.argv.slice(2), io);
