import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { check, type Message, repair } from '../src/index.js';
import { minimalValidator, PI_MODEL, toModelMessages, toPiMessages } from './support/peer-formats.js';
import { corrupt, seedShapedHistory } from './support/seed-history.js';

/**
 * bench/core-peers.bench.ts by instruction count, where wall time also measures the neighbours:
 *
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null node --single-threaded --import tsx bench/core-clean-callgrind.ts FUNCTION RUNS [HISTORY] [SCALE]
 *
 * FUNCTION: floor | check | repair | mastra | pi | roundtrip (one JSON stringify + parse, the bench's baseline);
 * HISTORY: clean | corrupted; SCALE: 1 | 30. Every invocation parses the same fresh copies and warms the function up
 * the same way, then runs it on RUNS of the copies, so (count(RUNS = 8) - count(RUNS = 0)) / 8 is one warm run on
 * fresh objects (start-up, generating the history, parsing and tier-up compilation cancel out; --single-threaded keeps
 * V8's compiler and GC threads, whose work varies from run to run, off the count). Instruction counts do
 * not see cache misses, which wall time does: the two answer different questions.
 */
const [name, runs, kind, scale] = [
  process.argv[2] ?? '',
  Number(process.argv[3]),
  process.argv[4] ?? 'clean',
  Number(process.argv[5] ?? 1),
];
const peersDir = new URL('./peers/node_modules/', import.meta.url);
const peer = async <T>(path: string): Promise<T> => {
  if (!existsSync(peersDir)) {
    console.error('bench/peers/node_modules is not there (`cd bench/peers && npm ci` installs the peers)');
    process.exit(2);
  }
  return (await import(pathToFileURL(fileURLToPath(new URL(path, peersDir))).href)) as T;
};
const functions: Record<string, () => Promise<[(messages: Message[]) => unknown, (input: unknown) => unknown]>> = {
  floor: async () => [(messages) => messages, (input) => minimalValidator(input as Message[])],
  check: async () => [(messages) => messages, (input) => check(input as Message[])],
  repair: async () => [(messages) => messages, (input) => repair(input as Message[])],
  roundtrip: async () => [(messages) => messages, (input) => JSON.parse(JSON.stringify(input))],
  mastra: async () => {
    const module = await peer<{ sanitizeOrphanedToolPairs: (messages: unknown[]) => unknown[] }>(
      '@mastra/core/dist/agent/message-list/index.js',
    );
    return [toModelMessages, (input) => module.sanitizeOrphanedToolPairs(input as unknown[])];
  },
  pi: async () => {
    const module = await peer<{ transformMessages: (messages: unknown[], model: unknown) => unknown[] }>(
      '@mariozechner/pi-ai/dist/providers/transform-messages.js',
    );
    return [toPiMessages, (input) => module.transformMessages(input as unknown[], PI_MODEL)];
  },
};
/** Fresh copies parsed by every invocation (the last one is the warm-up's): RUNS can be up to one less. */
const COPIES: Record<number, number> = { 1: 10, 30: 4 };
const make = functions[name];
if (
  make === undefined ||
  !Number.isSafeInteger(runs) ||
  runs < 0 ||
  runs >= (COPIES[scale] ?? 0) ||
  (kind !== 'clean' && kind !== 'corrupted') ||
  (scale !== 1 && scale !== 30)
) {
  console.error(
    `usage: core-clean-callgrind.ts ${Object.keys(functions).join('|')} RUNS(0-8 at 1x, 0-2 at 30x) [clean|corrupted] [1|30]`,
  );
  process.exit(2);
}
const [input, run] = await make();
const clean = seedShapedHistory(scale);
const json = JSON.stringify(input(kind === 'clean' ? clean : corrupt(clean, 0.05)));
const copies = Array.from({ length: COPIES[scale] as number }, () => JSON.parse(json) as unknown);
for (let warm = 0; warm < 5; warm += 1) run(copies[copies.length - 1]);
let sink = 0;
for (let index = 0; index < runs; index += 1) sink += run(copies[index]) === undefined ? 0 : 1;
console.log(name, kind, scale, runs, sink);
