/**
 * What the plugin adds to every request: the `llm/stream` handler (`guardRequest`: the DeepSeek
 * projection plus the core's `check`) on a loop request, what the `agent/status` and
 * `agent/pre-step` handlers do every step, and the `agent/request-error` heal's plan, against
 * the harness's own per-request work as the baseline (`session.deriveMessages()` and freezing
 * the request, which the agent loop does for every step anyway).
 * Run: cd plugins/dsh && node --import tsx bench/guard.bench.ts
 */
import {
  CallId,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  deepFreeze,
  markAgentLoopRequest,
} from '@deepseek-ai/dsh-llm';
import { Session, SessionId } from '@deepseek-ai/dsh-session';
import { findDangling } from '../src/dangling.js';
import { planBalance } from '../src/plan-balance.js';
import { planHeal } from '../src/plan-heal.js';
import { guardRequest } from '../src/stream-guard.js';
import { readSurface } from '../src/surface.js';

function session(turns: number): Session {
  const s = Session.create(SessionId(`bench-${turns}`));
  for (let turn = 1; turn <= turns; turn += 1) {
    s.append('turn/start', { turn });
    s.append('step/start', { turn, step: 1 });
    s.append(
      'user/message',
      createUserMessage({
        content: [{ type: 'text', text: `question ${turn} `.repeat(20) }],
        source: { kind: 'user' },
      }),
      { surfaceOp: 'append' },
    );
    const id = CallId(`call_${turn}`);
    s.append(
      'assistant/message',
      {
        turn,
        step: 1,
        message: createAssistantMessage({
          content: [
            { type: 'reasoning', text: 'thinking '.repeat(30) },
            { type: 'text', text: 'reading' },
            { type: 'tool-call', id, name: 'read', arguments: '{"path":"a.txt"}' },
          ],
          source: { provider: 'deepseek-official', model: 'deepseek-v4-flash' },
        }),
      },
      { surfaceOp: 'append', sourceEventSeqs: [] },
    );
    s.append('tool/call', { turn, step: 1, callId: id, name: 'read', arguments: '{"path":"a.txt"}' });
    s.append(
      'tool/result',
      {
        turn,
        step: 1,
        message: createToolResultMessage({
          callId: id,
          content: [{ type: 'text', text: 'file contents '.repeat(50) }],
          isError: false,
        }),
      },
      { surfaceOp: 'append' },
    );
    s.append('step/end', { turn, step: 1 });
    s.append('turn/end', { turn, reason: { kind: 'completed' } });
  }
  return s;
}

function time(label: string, iterations: number, run: () => void): number {
  for (let index = 0; index < Math.min(50, iterations); index += 1) run();
  const started = process.hrtime.bigint();
  for (let index = 0; index < iterations; index += 1) run();
  const perCall = Number(process.hrtime.bigint() - started) / iterations / 1000;
  console.log(`${label.padEnd(58)} ${perCall.toFixed(1).padStart(9)} µs/request`);
  return perCall;
}

for (const turns of [10, 100, 500]) {
  const s = session(turns);
  const messages = s.deriveMessages().length;
  const iterations = turns >= 500 ? 200 : 1000;
  console.log(`\n${turns} turns (${messages} messages, ${s.events.length} events)`);
  const baseline = time('baseline: deriveMessages + freeze a loop request', iterations, () => {
    markAgentLoopRequest(
      deepFreeze({ provider: 'deepseek-official', model: 'deepseek-v4-flash', messages: s.deriveMessages() }),
    );
  });
  const request = markAgentLoopRequest(
    deepFreeze({ provider: 'deepseek-official', model: 'deepseek-v4-flash', messages: s.deriveMessages() }),
  );
  const guard = time('llm/stream: guardRequest (projection + core check)', iterations, () => {
    guardRequest(request);
  });
  const step = time('status + pre-step, every step: readSurface + findDangling + balance', iterations, () => {
    const nodes = readSurface(s);
    findDangling(nodes.flatMap((node) => (node.message === null ? [] : [node.message])));
    planBalance(nodes);
  });
  time('request-error, only on a pairing 400: readSurface + planHeal', iterations, () => {
    planHeal(s, readSurface(s));
  });
  console.log(
    `${'ratio to baseline (llm/stream, status + pre-step)'.padEnd(58)} ${(guard / baseline).toFixed(1)}x, ${(step / baseline).toFixed(1)}x`,
  );
}
