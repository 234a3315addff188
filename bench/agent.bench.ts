import { cpus } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Tool } from '../src/agent/index.js';
import { createAgent } from '../src/agent/index.js';
import type { Message } from '../src/core/index.js';
import { repair } from '../src/core/index.js';
import type { Step } from '../src/emulator/index.js';
import { createEmulator } from '../src/emulator/index.js';
import { createMemoryStore } from '../src/session/index.js';
import { buildPoisonedSession } from '../test/chat/fixtures/poisoned-session.js';

/**
 * The runner's own cost per step against a bare request loop, both talking to the in-process
 * emulator (which checks every request with the core, as DeepSeek would). History: a 3,785-message
 * session shaped like NexForgeCLI's session-122357 (bench/support/seed-history.ts), repaired, then
 * one turn of 50 steps (49 tool calls, then an answer).
 * Target (docs/benchmarks.md): runner overhead <= 5% per step.
 */
const STEPS = 50;
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 11);
const model = 'deepseek-chat';
const history = repair(buildPoisonedSession(), { profile: 'deepseek', model }).messages;
const echo: Tool = {
  name: 'echo',
  description: 'echoes',
  parameters: { type: 'object', properties: { text: { type: 'string' } } },
  run: async (args) => `echo: ${(args as { text: string }).text}`,
};
const wireTools = [
  { type: 'function', function: { name: echo.name, description: echo.description, parameters: echo.parameters } },
];

function script(round: number): Step[] {
  const steps: Step[] = Array.from({ length: STEPS - 1 }, (_, index) => ({
    text: '',
    toolCalls: [{ id: `call_bench_${round}_${index}`, name: 'echo', arguments: `{"text":"step ${index}"}` }],
  }));
  steps.push({ text: 'All done.' });
  return steps;
}

const never = new AbortController().signal;

/** The baseline: what any client must do per step (serialize, send, parse, run the tool, append). */
async function bareLoop(round: number, stream: boolean): Promise<number> {
  const emulator = createEmulator({ profile: 'deepseek', script: script(round) });
  const messages: Message[] = [...structuredClone(history), { role: 'user', content: 'continue' }];
  const started = clock();
  for (let step = 0; step < STEPS; step += 1) {
    const response = await emulator.fetch('http://emulator.test/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
      body: JSON.stringify({ model, messages, stream: false, tools: wireTools }),
    });
    if (response.status !== 200) throw new Error(`bare loop got ${response.status}`);
    const message = ((await response.json()) as { choices: { message: Message }[] }).choices[0]!.message;
    messages.push(message);
    for (const call of message.tool_calls ?? [])
      messages.push({
        role: 'tool',
        tool_call_id: String(call.id),
        content: await echo.run(JSON.parse(call.function?.arguments ?? '{}'), { signal: never }),
      });
  }
  const elapsed = clock() - started;
  if (stream) throw new Error('the bare loop is non-streaming only');
  return elapsed;
}

async function agentLoop(round: number, stream: boolean): Promise<number> {
  const emulator = createEmulator({ profile: 'deepseek', script: script(round) });
  const agent = createAgent({
    baseURL: 'http://emulator.test/v1',
    apiKey: 'sk-bench',
    model,
    profile: 'deepseek',
    tools: [echo],
    fetch: emulator.fetch,
    stream,
    maxSteps: STEPS + 1,
    session: createMemoryStore(history),
  });
  await agent.open();
  const started = clock();
  let reason = '';
  for await (const event of agent.runTurn('continue')) if (event.type === 'turn-end') reason = event.reason;
  const elapsed = clock() - started;
  if (
    reason !== 'stop' ||
    emulator.requests.length !== STEPS ||
    emulator.requests.some((request) => request.status !== 200)
  )
    throw new Error(`agent loop: ${reason}, ${emulator.requests.length} requests`);
  return elapsed;
}

/**
 * CPU time of this process (user + system, ms). Everything runs in-process, so this is the work
 * done; wall time on a shared 2-core machine mostly measures the other processes.
 */
function clock(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

// A full collection before each timed loop, so one loop does not pay for the garbage of the last.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
async function timed(run: () => Promise<number>): Promise<number> {
  collectGarbage();
  return await run();
}

await bareLoop(-1, false);
await agentLoop(-2, false);
const bare: number[] = [];
const agent: number[] = [];
const agentStreaming: number[] = [];
for (let round = 0; round < ROUNDS; round += 1) {
  // Alternate the order (ABC, CBA) so neither loop always runs on a warmer or colder heap.
  const order = round % 2 === 0 ? ['bare', 'agent', 'stream'] : ['stream', 'agent', 'bare'];
  for (const which of order) {
    if (which === 'bare') bare.push(await timed(() => bareLoop(round, false)));
    if (which === 'agent') agent.push(await timed(() => agentLoop(round, false)));
    if (which === 'stream') agentStreaming.push(await timed(() => agentLoop(round, true)));
  }
}
const bareStep = median(bare) / STEPS;
const agentStep = median(agent) / STEPS;
const streamingStep = median(agentStreaming) / STEPS;
const overhead = (agentStep - bareStep) / bareStep;

console.log('## agent: runner overhead per step vs a bare request loop\n');
console.log(
  `${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'unknown cpu'} (${cpus().length} cores), Node ${process.version}; \`node --import tsx bench/agent.bench.ts\` (median of ${ROUNDS} interleaved rounds, CPU time of the process)\n`,
);
console.log(
  `History: a ${history.length}-message session shaped like NexForgeCLI's session-122357 (${(JSON.stringify(history).length / 1e6).toFixed(2)} M chars), one turn of ${STEPS} steps (49 tool calls + answer), in-process emulator checking every request (profile deepseek).\n`,
);
console.log('| loop | CPU ms per step |');
console.log('|---|---|');
console.log(`| bare loop (serialize, send, parse, run tool, append) | ${bareStep.toFixed(2)} |`);
console.log(
  `| agent runner, non-streaming | ${agentStep.toFixed(2)} (${overhead >= 0 ? '+' : ''}${(overhead * 100).toFixed(1)}%) |`,
);
console.log(`| agent runner, streaming (SSE) | ${streamingStep.toFixed(2)} |`);
console.log('');
console.log(
  `- ${overhead <= 0.05 ? 'meets' : 'MISSES'} target <= 5% runner overhead per step (non-streaming vs bare): ${(overhead * 100).toFixed(1)}%`,
);
