import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toolPairingBalancedAfter } from '@deepseek-ai/dsh-compaction';
import { CallId, createAssistantMessage, createToolResultMessage, createUserMessage } from '@deepseek-ai/dsh-llm';
import { foldSurface, type Session } from '@deepseek-ai/dsh-session';
import fc from 'fast-check';
import { check } from '../../../src/core/index.js';
import { applyEdits } from '../src/apply-edits.js';
import { planBalance } from '../src/plan-balance.js';
import { planHeal } from '../src/plan-heal.js';
import { readSurface } from '../src/surface.js';
import { toWire } from '../src/to-wire.js';
import { createSession, MODEL, PROVIDER } from './harness.js';

/** What a session log can hold, in any order: the ways a real one gets polluted. */
type Op =
  | { kind: 'prompt'; text: string }
  | { kind: 'assistant'; reasoning: string; text: string; calls: number }
  | { kind: 'result'; call: number; as: 'tool/result' | 'user/message' }
  | { kind: 'ghost'; text: string };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('prompt' as const), text: fc.constantFrom('continue', 'hi', 'go on') }),
  fc.record({
    kind: fc.constant('assistant' as const),
    reasoning: fc.constantFrom('', 'think'),
    text: fc.constantFrom('', 'ok'),
    calls: fc.integer({ min: 0, max: 3 }),
  }),
  fc.record({
    kind: fc.constant('result' as const),
    call: fc.integer({ min: 0, max: 8 }),
    as: fc.constantFrom('tool/result' as const, 'user/message' as const),
  }),
  fc.record({ kind: fc.constant('ghost' as const), text: fc.constantFrom('stale', 'old output') }),
);

/** The rules a heal is for: how calls and results pair up and sit. */
const HEALED_RULES = new Set([
  'tool-calls-unanswered',
  'tool-result-orphan',
  'tool-result-not-adjacent',
  'tool-result-duplicate',
  'tool-result-id-mismatch',
]);

function build(ops: readonly Op[]): { session: Session; resultTexts: string[]; reasoning: string[] } {
  const session = createSession();
  session.append('turn/start', { turn: 1 });
  session.append('step/start', { turn: 1, step: 1 });
  const declared: string[] = [];
  const resultTexts: string[] = [];
  const reasoning: string[] = [];
  let calls = 0;
  for (const entry of ops) {
    if (entry.kind === 'prompt') {
      session.append(
        'user/message',
        createUserMessage({ content: [{ type: 'text', text: entry.text }], source: { kind: 'user' } }),
        { surfaceOp: 'append' },
      );
    } else if (entry.kind === 'assistant') {
      const content: Parameters<typeof createAssistantMessage>[0]['content'] = [];
      if (entry.reasoning !== '') {
        content.push({ type: 'reasoning', text: `${entry.reasoning} ${calls}` });
        reasoning.push(`${entry.reasoning} ${calls}`);
      }
      if (entry.text !== '') content.push({ type: 'text', text: entry.text });
      for (let index = 0; index < entry.calls; index += 1) {
        const id = `call_${calls++}`;
        declared.push(id);
        content.push({ type: 'tool-call', id: CallId(id), name: 'tool', arguments: '{}' });
      }
      session.append(
        'assistant/message',
        {
          turn: 1,
          step: 1,
          message: createAssistantMessage({ content, source: { provider: PROVIDER, model: MODEL } }),
        },
        { surfaceOp: 'append', sourceEventSeqs: [] },
      );
    } else {
      const id =
        entry.kind === 'ghost'
          ? `ghost_${resultTexts.length}`
          : (declared[entry.call % Math.max(declared.length, 1)] ?? `ghost_${resultTexts.length}`);
      const text = `${entry.kind === 'ghost' ? entry.text : 'out'} #${resultTexts.length}`;
      resultTexts.push(text);
      const message = createToolResultMessage({
        callId: CallId(id),
        content: [{ type: 'text', text }],
        isError: false,
      });
      if (entry.kind === 'result' && entry.as === 'tool/result')
        session.append('tool/result', { turn: 1, step: 1, message }, { surfaceOp: 'append' });
      else session.append('user/message', message, { surfaceOp: 'append' });
    }
  }
  return { session, resultTexts, reasoning };
}

describe('planHeal on arbitrary polluted logs (real Session)', () => {
  it('heals: no pairing violation left, idempotent, nothing lost, every replacement accepted by the session', () => {
    let healed = 0;
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 14 }), (ops) => {
        const { session, resultTexts, reasoning } = build(ops);
        const edits = planHeal(session, readSurface(session));
        if (edits.length > 0) healed += 1;
        applyEdits(session, edits);
        assert.deepEqual(planHeal(session, readSurface(session)), [], 'a healed log plans nothing');
        const wire = toWire(session.deriveMessages()).messages;
        const left = check(wire, { profile: 'deepseek', model: MODEL }).filter((violation) =>
          HEALED_RULES.has(violation.rule),
        );
        assert.deepEqual(left, []);
        const text = JSON.stringify(wire);
        for (const output of resultTexts) assert.ok(text.includes(output), `result text "${output}" survives`);
        for (const thought of reasoning)
          assert.ok(
            wire.some((message) => message.reasoning_content === thought),
            `reasoning "${thought}" survives`,
          );
        foldSurface(session.events);
      }),
      { numRuns: 300 },
    );
    assert.ok(healed > 100, `the generator must produce broken logs (${healed} of 300 needed a heal)`);
  });

  it("then balances: compaction's count ends at zero, and the request stays legal", () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 14 }), (ops) => {
        const { session } = build(ops);
        applyEdits(session, planHeal(session, readSurface(session)));
        applyEdits(session, planBalance(readSurface(session)));
        assert.deepEqual(planBalance(readSurface(session)), []);
        const nodes = session.surface.nodes;
        if (nodes.length > 0) assert.equal(toolPairingBalancedAfter(session, nodes[nodes.length - 1]!), true);
        const wire = toWire(session.deriveMessages()).messages;
        assert.deepEqual(
          check(wire, { profile: 'deepseek', model: MODEL }).filter((violation) => HEALED_RULES.has(violation.rule)),
          [],
        );
      }),
      { numRuns: 300 },
    );
  });
});
