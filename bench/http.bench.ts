/**
 * The proxy's cost, in one run: added latency (p50/p99) through `unstuck proxy` versus direct, for
 * a 10-message body and a ~1 MB body; the time to the first SSE byte, added; throughput and CPU
 * per request (many short rotating rounds, http-throughput.ts) versus a minimal Node pass-through proxy (the baseline, in http-fixtures.ts), and for
 * context versus the same pass-through on undici (the HTTP client `unstuck proxy` uses upstream).
 * Each proxy runs in its own process (bench/http-proxy-child.ts), so its CPU time is its own.
 * Both children run as plain JavaScript (bundled with esbuild at start), as the shipped CLI runs
 * tsc's output: under tsx every closure a function creates also pays a `__name` helper
 * (esbuild's keepNames), which the product never does. UNSTUCK_BENCH_TSX=1 runs them under tsx.
 * Run: node --import tsx bench/http.bench.ts
 */
import { fork } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { largeBody, percentile, smallBody, startUpstream, timedPost } from './http-fixtures.js';
import {
  cpuRatiosOf,
  describeRatios,
  interleavedThroughput,
  ratiosOf,
  THROUGHPUT_ROUNDS,
  THROUGHPUT_SECONDS,
  totalErrors,
} from './http-throughput.js';

interface ChildProxy {
  url: string;
  cpu(): Promise<number>;
  stop(): Promise<void>;
}

const CHILD_SOURCE = join(import.meta.dirname, 'http-proxy-child.ts');
const viaTsx = process.env.UNSTUCK_BENCH_TSX === '1';
const bundleDir = mkdtempSync(join(tmpdir(), 'unstuck-bench-http-'));
const childScript = viaTsx ? CHILD_SOURCE : join(bundleDir, 'http-proxy-child.mjs');
if (!viaTsx)
  await build({
    entryPoints: [CHILD_SOURCE],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: childScript,
    logLevel: 'warning',
    // undici is CommonJS: its require() of node built-ins needs a real require inside the ESM bundle.
    banner: {
      js: "import { createRequire as __unstuckRequire } from 'node:module'; const require = __unstuckRequire(import.meta.url);",
    },
  });

/** Each child's stderr goes to a file, as `unstuck proxy 2>proxy.log` would: the log lines are part of the proxy's cost. */
const logFile = (kind: string): string => join(bundleDir, `${kind}.log`);

async function startChild(kind: 'unstuck' | 'baseline' | 'baseline-undici', upstream: string): Promise<ChildProxy> {
  const log = openSync(logFile(kind), 'w');
  const child = fork(childScript, [kind, upstream], {
    execArgv: viaTsx ? ['--import', 'tsx'] : [],
    stdio: ['ignore', 'inherit', log, 'ipc'],
  });
  closeSync(log);
  const url = await new Promise<string>((resolve) =>
    child.once('message', (message) => resolve((message as { url: string }).url)),
  );
  return {
    url,
    cpu: () =>
      new Promise((resolve) => {
        child.once('message', (message) => {
          const usage = message as NodeJS.CpuUsage;
          resolve(usage.user + usage.system);
        });
        child.send('cpu');
      }),
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.send('stop');
      }),
  };
}

const upstream = await startUpstream({ sseGapMs: 30 });
const proxy = await startChild('unstuck', upstream.url);
const baseline = await startChild('baseline', upstream.url);
const undiciBaseline = await startChild('baseline-undici', upstream.url);

/** Interleaves direct and proxied requests so drift (GC, other processes) hits both alike. */
async function addedLatency(body: string, rounds: number, path = '/v1/chat/completions') {
  const result = {
    direct: [] as number[],
    proxied: [] as number[],
    directFirst: [] as number[],
    proxiedFirst: [] as number[],
  };
  for (let round = 0; round < Math.ceil(rounds / 10); round += 1) {
    await timedPost(`${upstream.url}${path}`, body);
    await timedPost(`${proxy.url}${path}`, body);
  }
  for (let round = 0; round < rounds; round += 1) {
    const [directFirst, direct] = await timedPost(`${upstream.url}${path}`, body);
    const [proxiedFirst, proxied] = await timedPost(`${proxy.url}${path}`, body);
    result.direct.push(direct);
    result.proxied.push(proxied);
    result.directFirst.push(directFirst);
    result.proxiedFirst.push(proxiedFirst);
  }
  return result;
}

const ms = (value: number): string => `${value.toFixed(2)} ms`;
function describe(label: string, direct: number[], proxied: number[]): string {
  const added50 = percentile(proxied, 50) - percentile(direct, 50);
  const added99 = percentile(proxied, 99) - percentile(direct, 99);
  return `${label}: direct p50 ${ms(percentile(direct, 50))} p99 ${ms(percentile(direct, 99))} | proxied p50 ${ms(percentile(proxied, 50))} p99 ${ms(percentile(proxied, 99))} | added p50 ${ms(added50)}, p99 ${ms(added99)}`;
}

const small = smallBody();
const large = largeBody();
const log = (line: string): void => console.log(line);

const smallRun = await addedLatency(small, 2000);
log(describe(`small body (10 messages, ${small.length} B, 2000 requests)`, smallRun.direct, smallRun.proxied));
const largeRun = await addedLatency(large, 150);
log(
  describe(
    `large body (${(large.length / 1e6).toFixed(2)} MB, ${(JSON.parse(large) as { messages: unknown[] }).messages.length} messages, 150 requests)`,
    largeRun.direct,
    largeRun.proxied,
  ),
);
const sseRun = await addedLatency(small, 300, '/v1/chat/completions?sse=1');
log(
  `first SSE byte (300 requests; the upstream sends the rest 30 ms later): direct p50 ${ms(percentile(sseRun.directFirst, 50))} | proxied p50 ${ms(percentile(sseRun.proxiedFirst, 50))} | added p50 ${ms(percentile(sseRun.proxiedFirst, 50) - percentile(sseRun.directFirst, 50))}, p99 ${ms(percentile(sseRun.proxiedFirst, 99) - percentile(sseRun.directFirst, 99))}`,
);

// Many short rounds, each proxy once per round in a rotating order, so load from other processes
// hits all alike (http-throughput.ts); the ratios are taken within each round. CPU per request is
// the steadier figure on a shared machine: at saturation, throughput is 1 / CPU per request.
const targets = [
  { name: 'unstuck', url: proxy.url, cpu: proxy.cpu },
  { name: 'baseline', url: baseline.url, cpu: baseline.cpu },
  { name: 'undici', url: undiciBaseline.url, cpu: undiciBaseline.cpu },
];
const results = await interleavedThroughput(targets, {
  path: '/v1/chat/completions',
  headers: { authorization: 'Bearer sk-bench' },
  body: small,
});
const [ours = [], base = [], context = []] = targets.map((target) => results.get(target.name) ?? []);
const median = (rounds: { rps: number; cpuPerRequest: number }[], key: 'rps' | 'cpuPerRequest'): string =>
  percentile(
    rounds.map((round) => round[key]),
    50,
  ).toFixed(0);
log(`proxies run ${viaTsx ? 'under tsx' : 'as esbuild bundles (plain JavaScript, as the shipped CLI)'}`);
log(
  `throughput, 64 connections, small body, ${THROUGHPUT_ROUNDS} rotating rounds of ${THROUGHPUT_SECONDS} s after a warm-up: median req/s unstuck ${median(ours, 'rps')}, baseline ${median(base, 'rps')}, undici pass-through ${median(context, 'rps')}; median µs CPU per request ${median(ours, 'cpuPerRequest')} / ${median(base, 'cpuPerRequest')} / ${median(context, 'cpuPerRequest')}`,
);
log(
  `throughput ratio (unstuck / node:http baseline): ${describeRatios(ratiosOf(ours, base), 0.8)}; by CPU per request ${describeRatios(cpuRatiosOf(ours, base), 0.8)}`,
);
log(
  `throughput ratio (unstuck / the same pass-through on undici, what repairing and logging cost): ${describeRatios(ratiosOf(ours, context), 0.9)}; by CPU per request ${describeRatios(cpuRatiosOf(ours, context), 0.9)} | errors, all three: ${totalErrors(results)}`,
);

await Promise.all([proxy.stop(), baseline.stop(), undiciBaseline.stop()]);
const logLines = readFileSync(logFile('unstuck'), 'utf8')
  .split('\n')
  .filter((line) => line.includes('"outcome"')).length;
log(`unstuck log lines written to its log file: ${logLines} (one per request)`);
await upstream.close();
rmSync(bundleDir, { recursive: true, force: true });
