/**
 * The proxy's cost, in one run: added latency (p50/p99) through `unstuck proxy` versus direct,
 * for a 10-message body and a ~1 MB body; throughput versus a minimal Node pass-through proxy;
 * the time to the first SSE byte, added. Run: node --import tsx bench/http.bench.ts
 */
import autocannon from 'autocannon';
import { createNodeFetch, createProxyHandler, serveProxy } from '../src/http/index.js';
import { largeBody, percentile, smallBody, startBaselineProxy, startUpstream, timedPost } from './http-fixtures.js';

const THROUGHPUT_SECONDS = Number(process.env.UNSTUCK_BENCH_SECONDS ?? 3);
const THROUGHPUT_ROUNDS = 5;

const upstream = await startUpstream({ sseGapMs: 30 });
// Composed as `unstuck proxy` composes it.
const proxy = await serveProxy(createProxyHandler({ upstream: upstream.url, profile: 'deepseek', fetch: createNodeFetch() }), { port: 0 });
const baseline = await startBaselineProxy(upstream.url);

/** Interleaves direct and proxied requests so drift (GC, CPU frequency) hits both alike. */
async function addedLatency(body: string, rounds: number, path = '/v1/chat/completions'): Promise<{ direct: number[]; proxied: number[]; directFirst: number[]; proxiedFirst: number[] }> {
  const result = { direct: [] as number[], proxied: [] as number[], directFirst: [] as number[], proxiedFirst: [] as number[] };
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

function describe(label: string, direct: number[], proxied: number[]): string {
  const p50 = percentile(proxied, 50) - percentile(direct, 50);
  const p99 = percentile(proxied, 99) - percentile(direct, 99);
  return `${label}: direct p50 ${percentile(direct, 50).toFixed(2)} ms p99 ${percentile(direct, 99).toFixed(2)} ms | proxied p50 ${percentile(proxied, 50).toFixed(2)} ms p99 ${percentile(proxied, 99).toFixed(2)} ms | added p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`;
}

async function throughput(url: string, body: string): Promise<{ rps: number; errors: number; non2xx: number }> {
  const result = await autocannon({ url: `${url}/v1/chat/completions`, method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' }, body, connections: 64, duration: THROUGHPUT_SECONDS });
  return { rps: result.requests.average, errors: result.errors + result.timeouts, non2xx: result.non2xx };
}

const small = smallBody();
const large = largeBody();
const lines: string[] = [];
const log = (line: string): void => {
  lines.push(line);
  console.log(line);
};

const smallRun = await addedLatency(small, 2000);
log(describe(`small body (10 messages, ${small.length} B, 2000 rounds)`, smallRun.direct, smallRun.proxied));
const largeRun = await addedLatency(large, 150);
log(describe(`large body (${(large.length / 1e6).toFixed(2)} MB, ${JSON.parse(large).messages.length} messages, 150 rounds)`, largeRun.direct, largeRun.proxied));
const sseRun = await addedLatency(small, 300, '/v1/chat/completions?sse=1');
log(`first SSE byte: direct p50 ${percentile(sseRun.directFirst, 50).toFixed(2)} ms | proxied p50 ${percentile(sseRun.proxiedFirst, 50).toFixed(2)} ms | added p50 ${(percentile(sseRun.proxiedFirst, 50) - percentile(sseRun.directFirst, 50)).toFixed(2)} ms, p99 ${(percentile(sseRun.proxiedFirst, 99) - percentile(sseRun.directFirst, 99)).toFixed(2)} ms (upstream sends the rest 30 ms later)`);

// Throughput in alternating rounds, so load from other processes on the machine hits both alike.
const ratios: number[] = [];
const rounds: string[] = [];
let errors = 0;
for (let round = 0; round < THROUGHPUT_ROUNDS; round += 1) {
  const base = await throughput(baseline.url, small);
  const ours = await throughput(proxy.url, small);
  errors += base.errors + ours.errors + ours.non2xx;
  ratios.push(ours.rps / base.rps);
  rounds.push(`${ours.rps.toFixed(0)}/${base.rps.toFixed(0)}`);
}
log(`throughput, 64 connections, small body, ${THROUGHPUT_ROUNDS} alternating rounds of ${THROUGHPUT_SECONDS} s: unstuck/baseline req/s ${rounds.join(', ')} | median ratio ${percentile(ratios, 50).toFixed(2)}x | errors ${errors}`);

await Promise.all([proxy.close(), baseline.close(), upstream.close()]);
