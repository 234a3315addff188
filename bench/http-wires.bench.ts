/**
 * The proxy's cost on the native wires, in one run: `unstuck proxy` against the bare Node
 * pass-through (http-fixtures.ts) on the same path — `POST /v1/messages?beta=true` (as Claude Code
 * sends it), `POST /v1/responses` (as Codex does) and `POST /v1beta/models/m:generateContent` (as
 * Gemini CLI does; the first SSE byte on `:streamGenerateContent?alt=sse`) — interleaved request by
 * request: added p50/p99 for a 10-call tool loop and a ~1 MB session, the first SSE byte added (the
 * upstream sends one event at once, the rest 30 ms later), and throughput at 64 connections in
 * alternating rounds. Also the proxy on its generic `(Request) => Response` path (routes to several
 * origins). Each proxy runs in its own process, bundled with esbuild. The upstream answers with a
 * fixed body (its shape is not what is measured: the proxy relays answers as they come). The chat
 * wire has its own bench, http.bench.ts.
 * Run: node --import tsx bench/http-wires.bench.ts
 */
import { fork } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { build } from 'esbuild';
import { percentile, startUpstream, timedPost } from './http-fixtures.js';

const THROUGHPUT_SECONDS = Number(process.env.UNSTUCK_BENCH_SECONDS ?? 3);
const THROUGHPUT_ROUNDS = 5;

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

const FILE = 'export function compute(input: number): number {\n  return input * 2 + 1;\n}\n'.repeat(12);

/** A Claude Code-like tool loop, valid as sent: a question, then `turns` tool_use / tool_result pairs. */
function anthropicBody(options: { turns?: number; bytes?: number }): string {
  const messages: unknown[] = [{ role: 'user', content: 'Fix the failing test in src/app.ts' }];
  let size = 0;
  for (let turn = 0; turn < (options.turns ?? Infinity) && size < (options.bytes ?? Infinity); turn += 1) {
    const id = `toolu_${String(turn).padStart(4, '0')}`;
    const call = {
      role: 'assistant',
      content: [
        { type: 'text', text: `Reading file ${turn}.` },
        { type: 'tool_use', id, name: 'Read', input: { file_path: `src/module-${turn}.ts` } },
      ],
    };
    const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: FILE }] };
    messages.push(call, result);
    size += JSON.stringify(call).length + JSON.stringify(result).length;
  }
  return JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages });
}

/** A Codex-like Responses tool loop, valid as sent: a question, then `turns` function_call / function_call_output pairs. */
function responsesBody(options: { turns?: number; bytes?: number }): string {
  const input: unknown[] = [
    { role: 'user', content: [{ type: 'input_text', text: 'Fix the failing test in src/app.ts' }] },
  ];
  let size = 0;
  for (let turn = 0; turn < (options.turns ?? Infinity) && size < (options.bytes ?? Infinity); turn += 1) {
    const callId = `call_${String(turn).padStart(4, '0')}`;
    const call = {
      type: 'function_call',
      id: `fc_${String(turn).padStart(4, '0')}`,
      call_id: callId,
      name: 'exec_command',
      arguments: JSON.stringify({ cmd: `cat src/module-${turn}.ts` }),
    };
    const output = { type: 'function_call_output', call_id: callId, output: FILE };
    input.push(call, output);
    size += JSON.stringify(call).length + JSON.stringify(output).length;
  }
  return JSON.stringify({ model: 'gpt-5-codex', input });
}

/** A Gemini CLI-like tool loop, valid as sent: a question, then `turns` functionCall / functionResponse turns. */
function geminiBody(options: { turns?: number; bytes?: number }): string {
  const contents: unknown[] = [{ role: 'user', parts: [{ text: 'Fix the failing test in src/app.ts' }] }];
  let size = 0;
  for (let turn = 0; turn < (options.turns ?? Infinity) && size < (options.bytes ?? Infinity); turn += 1) {
    const call = {
      role: 'model',
      parts: [{ functionCall: { name: 'read_file', args: { absolute_path: `src/module-${turn}.ts` } } }],
    };
    const answer = {
      role: 'user',
      parts: [{ functionResponse: { name: 'read_file', response: { output: FILE } } }],
    };
    contents.push(call, answer);
    size += JSON.stringify(call).length + JSON.stringify(answer).length;
  }
  return JSON.stringify({ contents });
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

async function throughput(target: ChildProxy, path: string, headers: Record<string, string>, body: string) {
  const result = await autocannon({
    url: `${target.url}${path}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    connections: 64,
    duration: THROUGHPUT_SECONDS,
  });
  return { rps: result.requests.average, errors: result.errors + result.timeouts + result.non2xx };
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

for (const wire of WIRES) {
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

  const ratios: number[] = [];
  const genericRatios: number[] = [];
  const rounds: string[] = [];
  let errors = 0;
  for (let round = 0; round < THROUGHPUT_ROUNDS; round += 1) {
    const base = await throughput(baseline, wire.path, wire.headers, small);
    const ours = await throughput(proxy, wire.path, wire.headers, small);
    const gen = await throughput(generic, wire.path, wire.headers, small);
    errors += base.errors + ours.errors + gen.errors;
    ratios.push(ours.rps / base.rps);
    genericRatios.push(gen.rps / base.rps);
    rounds.push(`${ours.rps.toFixed(0)}/${gen.rps.toFixed(0)}/${base.rps.toFixed(0)}`);
  }
  log(
    `${wire.name} throughput, 64 connections, small body, ${THROUGHPUT_ROUNDS} alternating rounds of ${THROUGHPUT_SECONDS} s (unstuck / generic path / pass-through req/s): ${rounds.join('; ')}`,
  );
  log(
    `${wire.name} throughput ratio (unstuck / pass-through): median ${percentile(ratios, 50).toFixed(2)}x (min ${Math.min(...ratios).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)}); generic path ${percentile(genericRatios, 50).toFixed(2)}x | errors, all three: ${errors}`,
  );
}

await Promise.all([proxy.stop(), generic.stop(), baseline.stop()]);
await upstream.close();
rmSync(bundleDir, { recursive: true, force: true });
