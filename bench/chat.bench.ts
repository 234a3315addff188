/**
 * `unstuck chat` end to end, as a person runs it: a new process per run, the real binary through
 * tsx, the emulator on loopback. Baseline: `unstuck --version` (Node + tsx start-up, nothing of the
 * chat). Then a one-shot answer, a one-shot tool loop (read, list, answer), and resuming a poisoned
 * session shaped like NexForgeCLI's session-122357 (test/chat/fixtures/poisoned-session.ts;
 * 3,785 messages: load, repair, save as segments, send, answer).
 *   node --import tsx bench/chat.bench.ts
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmulator } from '../src/emulator/index.js';
import { formatTranscript } from '../src/session/index.js';
import { buildPoisonedSession } from '../test/chat/fixtures/poisoned-session.js';
import { cleanEnv, runChatBinary } from '../test/chat/harness/run-chat-binary.js';

const RUNS = 7;
const cwd = mkdtempSync(join(tmpdir(), 'unstuck-chat-bench-'));
const emulator = createEmulator({ profile: 'deepseek' });
const server = await emulator.listen();
// A window larger than the poisoned session keeps its row one request, as before compaction.
const env = cleanEnv({ OPENAI_API_KEY: 'sk-bench', UNSTUCK_CONTEXT_WINDOW: '1000000' });
const chat = ['chat', '--base-url', server.url, '--profile', 'deepseek'];
const sessions = join(cwd, '.unstuck', 'sessions');
writeFileSync(join(cwd, 'notes.md'), 'the answer is 42\n');
const poisoned = formatTranscript(buildPoisonedSession());

async function measure(
  name: string,
  args: string[],
  expected: string,
  prepare: () => void = () => undefined,
): Promise<{ name: string; median: number; min: number; max: number }> {
  const times: number[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    prepare();
    const started = performance.now();
    const result = await runChatBinary(args, { cwd, env, timeoutMs: 60_000 });
    times.push(performance.now() - started);
    if (result.code !== 0 || result.stdout !== expected)
      throw new Error(`${name}: exit ${result.code}, stdout ${JSON.stringify(result.stdout)}: ${result.stderr}`);
  }
  times.sort((a, b) => a - b);
  return { name, median: times[Math.floor(times.length / 2)]!, min: times[0]!, max: times.at(-1)! };
}

const results = [
  await measure('baseline: unstuck --version', ['--version'], '0.1.0\n'),
  await measure('chat -p (one answer)', [...chat, '-p', 'hi'], 'ok\n'),
  await measure('chat -p (tool loop: 2 tools, 2 requests)', [...chat, '-p', 'read the notes'], '42\n', () =>
    emulator.push(
      {
        toolCalls: [
          { name: 'read_file', arguments: '{"path":"notes.md"}' },
          { name: 'list_directory', arguments: '{}' },
        ],
      },
      { text: '42' },
    ),
  ),
  await measure(
    'chat --resume poisoned (3,785 messages)',
    [...chat, '--resume', 'poisoned', '-p', 'are we unstuck?'],
    'ok\n',
    () => {
      rmSync(sessions, { recursive: true, force: true });
      mkdirSync(sessions, { recursive: true });
      writeFileSync(join(sessions, 'poisoned.md'), poisoned);
    },
  ),
];
await server.close();
rmSync(cwd, { recursive: true, force: true });

const baseline = results[0]!.median;
console.log(
  `node ${process.version}, ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown cpu'}; ${RUNS} runs each, wall time per process`,
);
console.log('| run | median ms | min | max | over baseline |');
console.log('|---|---:|---:|---:|---:|');
for (const result of results) {
  console.log(
    `| ${result.name} | ${result.median.toFixed(0)} | ${result.min.toFixed(0)} | ${result.max.toFixed(0)} | ${(result.median - baseline).toFixed(0)} |`,
  );
}
