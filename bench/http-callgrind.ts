/**
 * The proxy's cost per request by instruction count, which do not depend on the machine's neighbours
 * (wall-clock throughput on a shared 2-core machine moves by ±30% between rounds). Each proxy of
 * bench/http-proxy-child.ts (esbuild-bundled, as the benches run it) runs under
 * `valgrind --tool=callgrind`; this process is its upstream (http-fixtures.ts) and its client. Per
 * wire: warm-up requests (the JIT tiers up), `callgrind_control --zero`, REQUESTS requests one at a
 * time on a keep-alive socket, `callgrind_control --dump`; the main thread's instruction total /
 * REQUESTS is one request's cost in that process, everything included (node:http, undici, the
 * repair, the log line, the metrics). V8's background threads (the optimizing compiler, GC
 * helpers) are counted apart: after the warm-up they are what is left of the JIT warming up. The same for the pass-throughs on the same path: `baseline-undici` (the
 * upstream client unstuck uses) and `baseline` (node:http).
 *
 * valgrind acts on a callgrind_control command only while the process runs code, so the child runs
 * a 50 ms timer (UNSTUCK_BENCH_TICK_MS): an idle proxy would otherwise leave `--zero` waiting
 * forever (an earlier driver hung there). What a process costs per second while idle (that timer,
 * prom-client's event-loop monitor in unstuck) is measured in an idle window of 2 s and subtracted
 * for the time the requests took: under valgrind a request takes ~50x longer, so per-second costs
 * would otherwise pass for per-request ones. Every step has a deadline; on any failure the
 * children are killed and the run exits 1.
 *
 * Run: flock /tmp/unstuck-bench.lock node --import tsx bench/http-callgrind.ts [REQUESTS] [WIRES] [KINDS] [--work]
 *   REQUESTS default 300; WIRES a comma list of chat,anthropic,responses,gemini (default all);
 *   KINDS a comma list of unstuck,baseline-undici,baseline (default all; `none` with --work); --work also counts each wire's
 *   body work alone (http-wire-work.ts: decode + parse, and + the repair), to tell how much of the
 *   gap to the pass-through is the core's.
 */
import type { ChildProcess } from 'node:child_process';
import { fork, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { build } from 'esbuild';
import { anthropicBody, geminiBody, responsesBody, smallBody, startUpstream, timedPost } from './http-fixtures.js';

type Kind = 'unstuck' | 'baseline-undici' | 'baseline';
const KINDS: readonly Kind[] = ['unstuck', 'baseline-undici', 'baseline'];

const WIRES = [
  { name: 'chat', path: '/v1/chat/completions', body: smallBody() },
  { name: 'anthropic', path: '/v1/messages?beta=true', body: anthropicBody({ turns: 5 }) },
  { name: 'responses', path: '/v1/responses', body: responsesBody({ turns: 5 }) },
  { name: 'gemini', path: '/v1beta/models/m:generateContent', body: geminiBody({ turns: 5 }) },
] as const;

const positional = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const work = process.argv.includes('--work');
const requests = Number(positional[0] ?? 300);
const wires = WIRES.filter((wire) =>
  (positional[1] ?? 'chat,anthropic,responses,gemini').split(',').includes(wire.name),
);
const kinds = KINDS.filter((kind) => (positional[2] ?? KINDS.join(',')).split(',').includes(kind));
if (!Number.isSafeInteger(requests) || requests < 1 || wires.length === 0 || (kinds.length === 0 && !work)) {
  console.error(
    'usage: http-callgrind.ts [REQUESTS] [chat,anthropic,responses,gemini] [unstuck,baseline-undici,baseline] [--work]',
  );
  process.exit(2);
}
const WARM_UP = Math.max(600, requests);
/** The whole run's deadline: valgrind runs node ~50x slower, but never this slow. */
const RUN_DEADLINE_MS = 30 * 60_000;
const STEP_DEADLINE_MS = 120_000;
const TICK_MS = 50;

const dir = mkdtempSync(join(tmpdir(), 'unstuck-callgrind-'));
const childScript = join(dir, 'http-proxy-child.mjs');
const workScript = join(dir, 'http-wire-work.mjs');
for (const [source, outfile] of [
  ['http-proxy-child.ts', childScript],
  ['http-wire-work.ts', workScript],
] as const)
  await build({
    entryPoints: [join(import.meta.dirname, source)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'warning',
    banner: {
      js: "import { createRequire as __unstuckRequire } from 'node:module'; const require = __unstuckRequire(import.meta.url);",
    },
  });

const children = new Set<ChildProcess>();
const upstream = await startUpstream();
let failed = false;
const deadline = setTimeout(
  () => abort(new Error(`the run took longer than ${RUN_DEADLINE_MS / 60_000} min`)),
  RUN_DEADLINE_MS,
);
deadline.unref();

function abort(error: unknown): never {
  console.error(`http-callgrind: ${error instanceof Error ? error.message : String(error)}`);
  for (const child of children) child.kill('SIGKILL');
  // A child killed this instant may still be closing its files: retried, and named if it cannot go.
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  } catch {
    console.error(`http-callgrind: could not remove ${dir}`);
  }
  process.exit(1);
}

// Stopped from outside (a `timeout`, Ctrl-C): the proxies under valgrind go too, and their dumps.
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => abort(new Error(`stopped (${signal})`)));

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** One callgrind_control command, with its own deadline (it waits for valgrind to act on it). */
function control(args: string[]): void {
  const result = spawnSync('callgrind_control', args, { timeout: STEP_DEADLINE_MS, encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(
      `callgrind_control ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`}): ${result.stderr}`,
    );
}

function totalOf(file: string): number {
  const total = /^(?:summary|totals):\s+(\d+)/m.exec(readFileSync(file, 'utf8'));
  if (total === null) throw new Error(`${file}: no instruction total`);
  return Number(total[1]);
}

/** One body's work alone (http-wire-work.ts) per run: the difference of two run counts, start-up and warm-up excluded. */
function workPerRun(wire: string, step: 'parse' | 'sanitize'): number {
  const count = (runs: number): number => {
    const out = join(dir, `work-${wire}-${step}-${runs}.out`);
    const result = spawnSync(
      'valgrind',
      [
        '--tool=callgrind',
        '--separate-threads=yes',
        `--callgrind-out-file=${out}`,
        process.execPath,
        workScript,
        wire,
        step,
        String(runs),
      ],
      { timeout: STEP_DEADLINE_MS * 3, encoding: 'utf8' },
    );
    if (result.status !== 0)
      throw new Error(`http-wire-work ${wire} ${step} ${runs}: ${result.error?.message ?? result.stderr.slice(-500)}`);
    return totalOf(`${out}-01`); // the main thread, as for the proxies
  };
  return (count(requests * 4) - count(requests)) / (requests * 3);
}

/**
 * The newest dump of this process: its main thread (the event loop, where a request's work is, and
 * what bounds a single-threaded proxy's throughput) and the rest (V8's background threads: the
 * optimizing compiler, GC helpers), one file per thread (`--separate-threads=yes`).
 */
function lastDump(kind: Kind, pid: number): { file: string; instructions: number; background: number } {
  const prefix = `${kind}.${pid}.`;
  const parts = readdirSync(dir)
    .filter((name) => name.startsWith(prefix))
    .map((name) => ({ name, part: Number(name.slice(prefix.length).split('-')[0]), thread: name.split('-').at(-1) }));
  const newest = Math.max(...parts.map((part) => part.part));
  const files = parts.filter((part) => part.part === newest);
  const main = files.find((part) => part.thread === '01');
  if (main === undefined) throw new Error(`no callgrind dump of ${kind}'s main thread (pid ${pid}) in ${dir}`);
  let background = 0;
  for (const part of files) if (part !== main) background += totalOf(join(dir, part.name));
  const file = join(dir, main.name);
  return { file, instructions: totalOf(file), background };
}

async function startChild(kind: Kind): Promise<{ child: ChildProcess; url: string; pid: number }> {
  const log = openSync(join(dir, `${kind}.log`), 'w'); // the log lines are part of the proxy's cost, as in the benches
  const child = fork(childScript, [kind, upstream.url], {
    execPath: 'valgrind',
    execArgv: [
      '--tool=callgrind',
      '--separate-threads=yes',
      `--callgrind-out-file=${join(dir, `${kind}.%p`)}`,
      process.execPath,
    ],
    env: { ...process.env, UNSTUCK_BENCH_TICK_MS: String(TICK_MS) },
    stdio: ['ignore', 'ignore', log, 'ipc'],
  });
  closeSync(log);
  children.add(child);
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`${kind} exited early (${code}); see ${join(dir, `${kind}.log`)}`))),
  );
  const url = await within(
    Promise.race([
      new Promise<string>((resolve) => child.once('message', (message) => resolve((message as { url: string }).url))),
      exited,
    ]),
    STEP_DEADLINE_MS,
    `${kind} start-up under valgrind`,
  );
  if (child.pid === undefined) throw new Error(`${kind}: no pid`);
  return { child, url, pid: child.pid };
}

async function stopChild(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.send('stop');
  try {
    await within(exited, STEP_DEADLINE_MS, 'stopping a proxy under valgrind');
  } catch {
    child.kill('SIGKILL');
  }
  children.delete(child);
}

async function post(url: string, body: string, count: number): Promise<void> {
  for (let index = 0; index < count; index += 1) await within(timedPost(url, body), 30_000, `POST ${url}`);
}

/** Instructions per request, per wire and kind; and the idle timer's instructions per second. */
const perRequest = new Map<string, number>();
const idlePerSecond = new Map<Kind, number>();
const idleShare = new Map<string, number>();
const backgroundPerRequest = new Map<string, number>();
const rounds = new Map<string, number[]>();
const MEASURE_ROUNDS = 2;
const IDLE_SECONDS = 2;
try {
  for (const kind of kinds) {
    const { child, url, pid } = await startChild(kind);
    // Every wire warmed up before any is measured: the code they share is compiled by then.
    for (const wire of wires) await post(`${url}${wire.path}`, wire.body, WARM_UP);
    control(['--zero', String(pid)]);
    const idleStarted = performance.now();
    await sleep(IDLE_SECONDS * 1000);
    control([`--dump=idle`, String(pid)]);
    idlePerSecond.set(kind, lastDump(kind, pid).instructions / ((performance.now() - idleStarted) / 1000));
    // Every wire measured in MEASURE_ROUNDS rounds, in turn: what the JIT still compiles after the warm-up shows as a
    // first round above the next; the least of the rounds is the figure (warming up only ever adds instructions).
    for (let round = 0; round < MEASURE_ROUNDS; round += 1)
      for (const wire of wires) {
        const target = `${url}${wire.path}`;
        await post(target, wire.body, 100); // back on this path after the others
        control(['--zero', String(pid)]);
        const started = performance.now();
        await post(target, wire.body, requests);
        const seconds = (performance.now() - started) / 1000;
        control([`--dump=${wire.name}`, String(pid)]);
        const dump = lastDump(kind, pid);
        // What the event loop does per second anyway (its timers) is not the requests' cost.
        const idle = (idlePerSecond.get(kind) ?? 0) * seconds;
        const key = `${kind} ${wire.name}`;
        const cost = (dump.instructions - idle) / requests;
        rounds.set(key, [...(rounds.get(key) ?? []), cost]);
        if (cost < (perRequest.get(key) ?? Number.POSITIVE_INFINITY)) {
          perRequest.set(key, cost);
          backgroundPerRequest.set(key, dump.background / requests);
          idleShare.set(key, idle / dump.instructions);
        }
      }
    await stopChild(child);
  }
  if (work)
    for (const wire of wires) {
      perRequest.set(`parse ${wire.name}`, workPerRun(wire.name, 'parse'));
      perRequest.set(`sanitize ${wire.name}`, workPerRun(wire.name, 'sanitize'));
    }
} catch (error) {
  failed = true;
  abort(error);
}

const k = (value: number | undefined): string => (value === undefined ? '-' : `${(value / 1000).toFixed(1)} k`);
const share = (kind: Kind): string =>
  wires.map((wire) => `${((idleShare.get(`${kind} ${wire.name}`) ?? 0) * 100).toFixed(0)}%`).join('/');
if (kinds.length > 0) {
  console.log(
    `\ninstructions per request under callgrind (${requests} requests one at a time after ${WARM_UP} warm-up ones, one keep-alive socket; the main thread, less its idle rate)`,
  );
  console.log(
    `wire       ${kinds.map((kind) => kind.padStart(16)).join('')}${kinds.includes('unstuck') ? '   unstuck / each pass-through' : ''}`,
  );
  for (const wire of wires) {
    const ours = perRequest.get(`unstuck ${wire.name}`);
    const cells = kinds.map((kind) => k(perRequest.get(`${kind} ${wire.name}`)).padStart(16)).join('');
    const ratios = kinds
      .filter((kind) => kind !== 'unstuck')
      .map((kind) => {
        const base = perRequest.get(`${kind} ${wire.name}`);
        return ours === undefined || base === undefined ? '' : `${(ours / base).toFixed(2)}x ${kind}`;
      })
      .filter((text) => text !== '');
    console.log(`${wire.name.padEnd(11)}${cells}   ${ratios.join(', ')}`);
  }
}
if (work) {
  console.log(
    '\nthe body alone (http-wire-work.ts, in one process): decode + JSON.parse, and decode + parse + the repair of a valid body (wire.sanitize, the core)',
  );
  for (const wire of wires) {
    const parse = perRequest.get(`parse ${wire.name}`) ?? Number.NaN;
    const sanitize = perRequest.get(`sanitize ${wire.name}`) ?? Number.NaN;
    const ours = perRequest.get(`unstuck ${wire.name}`);
    const base = perRequest.get(`baseline-undici ${wire.name}`);
    const gap =
      ours === undefined || base === undefined
        ? ''
        : `; of unstuck's ${k(ours - base)} over the undici pass-through, the body's work is ${((sanitize / (ours - base)) * 100).toFixed(0)}% (the repair alone ${(((sanitize - parse) / (ours - base)) * 100).toFixed(0)}%)`;
    console.log(
      `${wire.name.padEnd(11)}parse ${k(parse)}, parse + repair ${k(sanitize)} (the repair ${k(sanitize - parse)})${gap}`,
    );
  }
}
if (kinds.length > 0) {
  console.log(
    `each round (the least is the figure): ${[...rounds].map(([key, costs]) => `${key} ${costs.map(k).join(' / ')}`).join('; ')}`,
  );
  console.log(
    `V8's background threads (optimizing compiler, GC helpers) per request, not counted above: ${kinds.map((kind) => `${kind} ${wires.map((wire) => k(backgroundPerRequest.get(`${kind} ${wire.name}`))).join('/')}`).join(', ')}`,
  );
  console.log(
    `subtracted: what each process does idle (timers: the ${TICK_MS} ms wake-up, prom-client's event-loop monitor), instructions per second ${kinds.map((kind) => `${kind} ${k(idlePerSecond.get(kind))} (${share(kind)} of the dumps)`).join(', ')}`,
  );
}
clearTimeout(deadline);
await upstream.close();
rmSync(dir, { recursive: true, force: true });
process.exitCode = failed ? 1 : 0;
