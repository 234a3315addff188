/**
 * The proxy's cost on the native wires, in one run: `unstuck proxy` against the bare Node
 * pass-through (http-fixtures.ts) on the same path — `POST /v1/messages?beta=true` (as Claude Code
 * sends it), `POST /v1/responses` (as Codex does) and `POST /v1beta/models/m:generateContent` (as
 * Gemini CLI does; the first SSE byte on `:streamGenerateContent?alt=sse`) — interleaved request by
 * request: added p50/p99 for a 10-call tool loop and a ~1 MB session, the first SSE byte added (the
 * upstream sends one event at once, the rest 30 ms later), and throughput at 64 connections in
 * many short rotating rounds (http-throughput.ts). Also the proxy on its generic `(Request) => Response` path (routes to several
 * origins). Each proxy runs in its own process, bundled with esbuild. The upstream answers with a
 * fixed body (its shape is not what is measured: the proxy relays answers as they come). The chat
 * wire has its own bench, http.bench.ts.
 * Run: node --import tsx bench/http-wires.bench.ts
 */
import { fork } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { anthropicBody, geminiBody, percentile, responsesBody, startUpstream, timedPost } from './http-fixtures.js';
import {
  describeRatios,
  interleavedThroughput,
  ratiosOf,
  THROUGHPUT_ROUNDS,
  THROUGHPUT_SECONDS,
  totalErrors,
} from './http-throughput.js';

const bundleDir = mkdtempSync(join(tmpdir(), 'unstuck-bench-wires-'));
const childScript = join(bundleDir, 'http-proxy-child.mjs');
await build({
  entryPoints: [join(import.meta.dirname, 'http-proxy-child.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile: childScript,
  logLevel: 'warning',
  banner: {
    js: "import { createRequire as __unstuckRequire } from 'node:module'; const require = __unstuckRequire(import.meta.url);",
  },
});

interface ChildProxy {
  url: string;
  stop(): Promise<void>;
}

async function startChild(kind: 'unstuck' | 'unstuck-generic' | 'baseline', upstream: string): Promise<ChildProxy> {
  const log = openSync(join(bundleDir, `${kind}.log`), 'w'); // the log lines are part of the proxy's cost
  const child = fork(childScript, [kind, upstream], { stdio: ['ignore', 'inherit', log, 'ipc'] });
  closeSync(log);
  const url = await new Promise<string>((resolve) =>
    child.once('message', (message) => resolve((message as { url: string }).url)),
  );
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.send('stop');
      }),
  };
}

const upstream = await startUpstream({ sseGapMs: 30 });
const proxy = await startChild('unstuck', upstream.url);
const generic = await startChild('unstuck-generic', upstream.url);
const baseline = await startChild('baseline', upstream.url);

/** Baseline, unstuck and unstuck on the generic path, one request each per round, so drift hits all alike. */
async function interleaved(body: string, rounds: number, path: string) {
  const targets = [baseline, proxy, generic];
  const total = targets.map(() => [] as number[]);
  const first = targets.map(() => [] as number[]);
  for (let round = 0; round < Math.ceil(rounds / 10); round += 1)
    for (const target of targets) await timedPost(`${target.url}${path}`, body);
  for (let round = 0; round < rounds; round += 1) {
    for (const [index, target] of targets.entries()) {
      const [firstByte, end] = await timedPost(`${target.url}${path}`, body);
      total[index]?.push(end);
      first[index]?.push(firstByte);
    }
  }
  return { total, first };
}

const ms = (value: number): string => `${value.toFixed(2)} ms`;
function describe(label: string, samples: number[][]): string {
  const [base = [], ours = [], gen = []] = samples;
  const added = (values: number[], p: number): string => ms(percentile(values, p) - percentile(base, p));
  return `${label}: pass-through p50 ${ms(percentile(base, 50))} | unstuck p50 ${ms(percentile(ours, 50))}, added p50 ${added(ours, 50)}, p99 ${added(ours, 99)} | generic path added p50 ${added(gen, 50)}, p99 ${added(gen, 99)}`;
}

const log = (line: string): void => console.log(line);
const WIRES = [
  {
    name: 'anthropic',
    path: '/v1/messages?beta=true',
    ssePath: '/v1/messages?beta=true&sse=1',
    headers: { 'x-api-key': 'sk-ant-bench', 'anthropic-version': '2023-06-01' },
    body: anthropicBody,
  },
  {
    name: 'responses',
    path: '/v1/responses',
    ssePath: '/v1/responses?sse=1',
    headers: { authorization: 'Bearer sk-bench' },
    body: responsesBody,
  },
  {
    name: 'gemini',
    path: '/v1beta/models/m:generateContent',
    ssePath: '/v1beta/models/m:streamGenerateContent?alt=sse',
    headers: { 'x-goog-api-key': 'AIza-bench' },
    body: geminiBody,
  },
];

// UNSTUCK_BENCH_WIRES=responses,gemini runs only those wires.
const only = process.env.UNSTUCK_BENCH_WIRES?.split(',');
for (const wire of WIRES.filter((candidate) => only === undefined || only.includes(candidate.name))) {
  const small = wire.body({ turns: 5 }); // 11 items
  const large = wire.body({ bytes: 1_000_000 });
  const smallRun = await interleaved(small, 1000, wire.path);
  log(describe(`${wire.name} small body (11 items, ${small.length} B, 1000 requests each)`, smallRun.total));
  const largeRun = await interleaved(large, 100, wire.path);
  log(describe(`${wire.name} large body (${(large.length / 1e6).toFixed(2)} MB, 100 requests each)`, largeRun.total));
  const sseRun = await interleaved(small, 300, wire.ssePath);
  log(
    describe(`${wire.name} first SSE byte on ${wire.ssePath} (300 requests each; the rest 30 ms later)`, sseRun.first),
  );

  // Many short rounds, each proxy once per round in a rotating order (http-throughput.ts); ratios within each round.
  const results = await interleavedThroughput(
    [
      { name: 'unstuck', url: proxy.url },
      { name: 'generic', url: generic.url },
      { name: 'baseline', url: baseline.url },
    ],
    { path: wire.path, headers: wire.headers, body: small },
  );
  const [ours = [], gen = [], base = []] = ['unstuck', 'generic', 'baseline'].map((name) => results.get(name) ?? []);
  log(
    `${wire.name} throughput, 64 connections, small body, ${THROUGHPUT_ROUNDS} rotating rounds of ${THROUGHPUT_SECONDS} s after a warm-up (unstuck / generic path / pass-through req/s): ${ours.map((round, index) => `${round.rps.toFixed(0)}/${gen[index]?.rps.toFixed(0)}/${base[index]?.rps.toFixed(0)}`).join('; ')}`,
  );
  log(
    `${wire.name} throughput ratio (unstuck / pass-through): ${describeRatios(ratiosOf(ours, base), 0.8)}; generic path median ${percentile(ratiosOf(gen, base), 50).toFixed(2)}x | errors, all three: ${totalErrors(results)}`,
  );
}

await Promise.all([proxy.stop(), generic.stop(), baseline.stop()]);
await upstream.close();
rmSync(bundleDir, { recursive: true, force: true });
