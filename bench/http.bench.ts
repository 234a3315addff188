/**
 * The proxy's cost, in one run: added latency (p50/p99) through `unstuck proxy` versus direct, for
 * a 10-message body and a ~1 MB body; the time to the first SSE byte, added; throughput and CPU
 * per request versus a minimal Node pass-through proxy (the baseline, in http-fixtures.ts), and for
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
import autocannon from 'autocannon';
import { build } from 'esbuild';
import { largeBody, percentile, smallBody, startUpstream, timedPost } from './http-fixtures.js';

const THROUGHPUT_SECONDS = Number(process.env.UNSTUCK_BENCH_SECONDS ?? 3);
const THROUGHPUT_ROUNDS = 5;

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

async function throughput(
  target: ChildProxy,
  body: string,
): Promise<{ rps: number; cpuPerRequest: number; errors: number; detail: string }> {
  const before = await target.cpu();
  const result = await autocannon({
    url: `${target.url}/v1/chat/completions`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
    body,
    connections: 64,
    duration: THROUGHPUT_SECONDS,
  });
  const after = await target.cpu();
  const detail = `errors ${result.errors}, timeouts ${result.timeouts}, non-2xx ${result.non2xx}`;
  if (result.errors + result.timeouts + result.non2xx > 0) console.error(`${target.url}: ${detail}`);
  return {
    rps: result.requests.average,
    cpuPerRequest: (after - before) / Math.max(1, result.requests.total),
    errors: result.errors + result.timeouts + result.non2xx,
    detail,
  };
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

// Alternating rounds, so load from other processes hits both alike. CPU per request is the
// steadier figure on a shared machine: at saturation, throughput is 1 / CPU per request.
const ratios: number[] = [];
const cpuRatios: number[] = [];
const contextRatios: number[] = [];
const rounds: string[] = [];
let ourErrors = 0;
let baseErrors = 0;
for (let round = 0; round < THROUGHPUT_ROUNDS; round += 1) {
  const base = await throughput(baseline, small);
  const ours = await throughput(proxy, small);
  const context = await throughput(undiciBaseline, small);
  baseErrors += base.errors + context.errors;
  ourErrors += ours.errors;
  ratios.push(ours.rps / base.rps);
  cpuRatios.push(base.cpuPerRequest / ours.cpuPerRequest);
  contextRatios.push(ours.rps / context.rps);
  rounds.push(
    `${ours.rps.toFixed(0)}/${base.rps.toFixed(0)}/${context.rps.toFixed(0)} req/s, ${ours.cpuPerRequest.toFixed(0)}/${base.cpuPerRequest.toFixed(0)}/${context.cpuPerRequest.toFixed(0)} µs CPU per request`,
  );
}
log(`proxies run ${viaTsx ? 'under tsx' : 'as esbuild bundles (plain JavaScript, as the shipped CLI)'}`);
log(
  `throughput, 64 connections, small body, ${THROUGHPUT_ROUNDS} alternating rounds of ${THROUGHPUT_SECONDS} s (unstuck / baseline / undici pass-through): ${rounds.join('; ')}`,
);
log(
  `throughput ratio (unstuck / baseline): median ${percentile(ratios, 50).toFixed(2)}x by req/s, ${percentile(cpuRatios, 50).toFixed(2)}x by CPU per request | errors: unstuck ${ourErrors}, baselines ${baseErrors}`,
);
log(
  `context (unstuck / the same pass-through on undici, what repairing and logging cost): median ${percentile(contextRatios, 50).toFixed(2)}x by req/s`,
);

await Promise.all([proxy.stop(), baseline.stop(), undiciBaseline.stop()]);
const logLines = readFileSync(logFile('unstuck'), 'utf8')
  .split('\n')
  .filter((line) => line.includes('"outcome"')).length;
log(`unstuck log lines written to its log file: ${logLines} (one per request)`);
await upstream.close();
rmSync(bundleDir, { recursive: true, force: true });
