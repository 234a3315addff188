import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { check, type Message, repair } from '../src/index.js';
import { minimalValidator, PI_MODEL, toModelMessages, toPiMessages } from './support/peer-formats.js';
import { corrupt, seedShapedHistory } from './support/seed-history.js';

/**
 * Check and repair beside a minimal one-pass validator (the floor) and two peers,
 * Mastra's `sanitizeOrphanedToolPairs` and pi-ai's `transformMessages`, on a history shaped like
 * NexForgeCLI's session-122357 (3,785 messages) and 30x it (ids unique across the history, so the
 * 30x history is as clean as the 1x one), clean
 * and 5% corrupted. Each function meets fresh objects in its own format every run (a JSON parse of
 * its input, untimed), a full GC before every timed run, and each run is paired with a JSON round
 * trip (stringify + parse) of the same data: the figure is the median of those per-round ratios.
 * Node runs with --single-threaded-gc, so GC work stays on the measured thread.
 *
 * The peers live in bench/peers (own package.json and lockfile: `cd bench/peers && npm ci`);
 * without bench/peers/node_modules their rows are skipped with a note.
 */
const self = fileURLToPath(import.meta.url);
if (!process.execArgv.includes('--single-threaded-gc')) {
  const child = spawnSync(
    process.execPath,
    ['--expose-gc', '--single-threaded-gc', '--import', 'tsx', self, ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  process.exit(child.status ?? 1);
}

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const quick = process.argv.includes('--quick');

type Run = (input: unknown) => unknown;
interface Contender {
  name: string;
  /** The function's input, in its own format, made from the chat history. */
  input: (messages: Message[]) => unknown;
  run: Run;
}

const peersDir = new URL('./peers/node_modules/', import.meta.url);
const contenders: Contender[] = [
  {
    name: 'minimal one-pass validator (the floor)',
    input: (messages) => messages,
    run: (input) => minimalValidator(input as Message[]),
  },
];
const notes: string[] = [];
if (existsSync(peersDir)) {
  const mastra = (await import(
    pathToFileURL(fileURLToPath(new URL('@mastra/core/dist/agent/message-list/index.js', peersDir))).href
  )) as { sanitizeOrphanedToolPairs: (messages: unknown[]) => unknown[] };
  // transformMessages is not in pi-ai's exports map: imported by its file, as pi-ai's providers import it.
  const pi = (await import(
    pathToFileURL(fileURLToPath(new URL('@mariozechner/pi-ai/dist/providers/transform-messages.js', peersDir))).href
  )) as { transformMessages: (messages: unknown[], model: unknown) => unknown[] };
  contenders.push(
    {
      name: 'Mastra `sanitizeOrphanedToolPairs` (@mastra/core 1.71.0)',
      input: toModelMessages,
      run: (input) => mastra.sanitizeOrphanedToolPairs(input as unknown[]),
    },
    {
      name: 'pi-ai `transformMessages` (@mariozechner/pi-ai 0.73.1)',
      input: toPiMessages,
      run: (input) => pi.transformMessages(input as unknown[], PI_MODEL),
    },
  );
} else {
  notes.push('- peers skipped: bench/peers/node_modules is not there (`cd bench/peers && npm ci` installs them)');
}
contenders.push(
  { name: 'unstuck `repair`', input: (messages) => messages, run: (input) => repair(input as Message[]) },
  { name: 'unstuck `check`', input: (messages) => messages, run: (input) => check(input as Message[]) },
);

function timed(run: () => unknown): number {
  (gc as () => void)();
  const started = performance.now();
  run();
  return performance.now() - started;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** Per round: the function on fresh objects, and a JSON round trip of the same data; the ratios. */
function measure(
  contender: Contender,
  messages: Message[],
  rounds: number,
): { ratio: number; low: number; high: number; ms: number } {
  const json = JSON.stringify(contender.input(messages));
  for (let warm = 0; warm < 3; warm += 1) contender.run(JSON.parse(json));
  const ratios: number[] = [];
  const times: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const data = JSON.parse(json) as unknown;
    const baseline = timed(() => JSON.parse(JSON.stringify(data)));
    const fresh = JSON.parse(json) as unknown;
    const ms = timed(() => contender.run(fresh));
    ratios.push(ms / baseline);
    times.push(ms);
  }
  ratios.sort((a, b) => a - b);
  return {
    ratio: median(ratios),
    low: ratios[0] as number,
    high: ratios[ratios.length - 1] as number,
    ms: median(times),
  };
}

const histories: { label: string; scale: number; messages: Message[] }[] = [];
for (const scale of [1, 30]) {
  const clean = seedShapedHistory(scale);
  histories.push(
    { label: `${scale}x, clean`, scale, messages: clean },
    { label: `${scale}x, 5% corrupted`, scale, messages: corrupt(clean, 0.05) },
  );
}

const results = new Map<string, Map<string, { ratio: number; low: number; high: number; ms: number }>>();
for (const history of histories) {
  const rounds = quick ? 5 : history.scale === 1 ? 31 : 7;
  for (const contender of contenders) {
    let row = results.get(contender.name);
    if (row === undefined) {
      row = new Map();
      results.set(contender.name, row);
    }
    row.set(history.label, measure(contender, history.messages, rounds));
  }
}

const labels = histories.map((history) => history.label);
console.log('## core: check and repair beside the floor and the peers\n');
console.log(
  `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cpus()[0]?.model ?? 'unknown cpu'} (${cpus().length} cores), Node ${process.version} --single-threaded-gc, load average ${loadavg()[0]?.toFixed(1)}; \`node --import tsx bench/core-peers.bench.ts\`\n`,
);
for (const history of histories)
  console.log(
    `- ${history.label}: ${history.messages.length} messages, ${(JSON.stringify(history.messages).length / 1e6).toFixed(2)} M chars`,
  );
console.log('\nRatio to one JSON round trip of the same data (median of per-round ratios; min-max):\n');
console.log(`| function | ${labels.join(' | ')} |`);
console.log(`|---|${labels.map(() => '---').join('|')}|`);
for (const [name, row] of results)
  console.log(
    `| ${name} | ${labels
      .map((label) => {
        const cell = row.get(label);
        return cell === undefined ? '-' : `${cell.ratio.toFixed(3)} (${cell.low.toFixed(2)}-${cell.high.toFixed(2)})`;
      })
      .join(' | ')} |`,
  );
console.log('');
const floor = results.get(contenders[0]?.name ?? '');
const verdict = (name: string, label: string, limit: number) => {
  const cell = results.get(name)?.get(label);
  const base = floor?.get(label);
  if (cell === undefined || base === undefined) return;
  const times = cell.ratio / base.ratio;
  console.log(
    `- ${times <= limit ? 'meets' : 'MISSES'} target <= ${limit}x the floor: ${name}, ${label} = ${times.toFixed(2)}x`,
  );
};
for (const name of ['unstuck `check`', 'unstuck `repair`']) {
  for (const label of labels) verdict(name, label, label.includes('corrupted') ? 2 : 1.2);
  for (const peer of contenders.slice(1, -2)) {
    for (const label of labels.filter((label) => label.includes('clean'))) {
      const ours = results.get(name)?.get(label)?.ratio ?? Number.NaN;
      const theirs = results.get(peer.name)?.get(label)?.ratio ?? Number.NaN;
      console.log(
        `- ${ours < theirs ? 'ahead of' : 'BEHIND'} ${peer.name.split(' (')[0]}: ${name}, ${label} (${ours.toFixed(3)} vs ${theirs.toFixed(3)})`,
      );
    }
  }
  for (const kind of ['clean', '5% corrupted']) {
    const one = results.get(name)?.get(`1x, ${kind}`);
    const thirty = results.get(name)?.get(`30x, ${kind}`);
    if (one !== undefined && thirty !== undefined)
      console.log(
        `- linear to 30x: ${name}, ${kind}: ${(thirty.ms / one.ms).toFixed(1)}x the time for 30x the data (ratio to the round trip ${one.ratio.toFixed(3)} -> ${thirty.ratio.toFixed(3)})`,
      );
  }
}
for (const note of notes) console.log(note);
