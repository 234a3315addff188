import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { wideBlock } from '../../bench/support/wide-block.js';
import type { Finding, RuleContext } from '../../src/core/rules/rule.js';
import { scanToolBlocks } from '../../src/core/tool-block-scan.js';
import {
  check,
  getProfile,
  type Message,
  type ProfileName,
  type RepairOptions,
  repair,
  toAnthropicMessages,
  toGeminiContents,
  toResponsesInput,
} from '../../src/index.js';
import { assertNothingLostSilently, assertUntouchedAreSameObjects, deepFreeze } from '../support/lossless.js';

/**
 * One assistant message with many calls (one 6.4 MB request of 5x10^4 calls once froze the
 * proxy). The scan indexes the ids of a block of more than 16 calls (a linear search below);
 * repair pairs every block through per-id queues.
 * Wide blocks here are damaged the ways parallel calls are: results lost, repeated, reordered,
 * answering no call, without ids, calls sharing one id, messages wedged among the results.
 */
const seed =
  process.env['UNSTUCK_PROPERTY_SEED'] === undefined ? 20261201 : Number(process.env['UNSTUCK_PROPERTY_SEED']);
const runs = Math.max(40, Math.floor(Number(process.env['UNSTUCK_PROPERTY_RUNS'] ?? 10_400) / 100));

const wideDamaged: fc.Arbitrary<Message[]> = fc
  .record({
    calls: fc.integer({ min: 17, max: 160 }),
    idPool: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 8 })), // 0: every id distinct; else ids drawn from a small pool
    missingIdRate: fc.constantFrom(0, 0.05, 0.5, 1),
    lossRate: fc.constantFrom(0, 0.1, 0.5),
    repeatRate: fc.constantFrom(0, 0.05, 0.3),
    strayRate: fc.constantFrom(0, 0.05),
    wedged: fc.constantFrom(0, 1, 3),
    order: fc.constantFrom('kept', 'reversed', 'shuffled'),
    trailing: fc.boolean(),
    seed: fc.integer(),
  })
  .map((shape) => {
    let state = shape.seed | 1;
    const random = () => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) / 0x1_0000_0000;
    };
    const ids: (string | undefined)[] = [];
    for (let position = 0; position < shape.calls; position += 1) {
      if (random() < shape.missingIdRate) ids.push(undefined);
      else ids.push(shape.idPool === 0 ? `call_${position}` : `call_${Math.floor(random() * shape.idPool)}`);
    }
    const assistant: Message = {
      role: 'assistant',
      content: 'reading',
      tool_calls: ids.map((id, position) => ({
        ...(id === undefined ? {} : { id }),
        type: 'function',
        function: { name: 'read_file', arguments: `{"path":"f${position}"}` },
      })),
    };
    const results: Message[] = [];
    ids.forEach((id, position) => {
      if (random() < shape.lossRate) return;
      const result: Message = {
        role: 'tool',
        ...(id === undefined ? {} : { tool_call_id: id }),
        content: `contents of f${position}`,
      };
      results.push(result);
      if (random() < shape.repeatRate) results.push({ ...result, content: `again f${position}` });
      if (random() < shape.strayRate)
        results.push({ role: 'tool', tool_call_id: `call_gone_${position}`, content: `stray ${position}` });
    });
    if (shape.order === 'reversed') results.reverse();
    if (shape.order === 'shuffled') {
      for (let index = results.length - 1; index > 0; index -= 1) {
        const other = Math.floor(random() * (index + 1));
        [results[index], results[other]] = [results[other] as Message, results[index] as Message];
      }
    }
    for (let count = 0; count < shape.wedged; count += 1)
      results.splice(Math.floor(random() * (results.length + 1)), 0, { role: 'user', content: `wedged ${count}` });
    return [
      { role: 'user', content: 'read them all' },
      assistant,
      ...results,
      ...(shape.trailing
        ? [
            { role: 'assistant', content: 'done' },
            { role: 'user', content: 'thanks' },
          ]
        : []),
    ] as Message[];
  });

function scan(messages: readonly Message[], profile: ProfileName, uniqueAcross: boolean, wideAbove: number): Finding[] {
  const findings: Finding[] = [];
  const context: RuleContext = {
    messages,
    profile: getProfile(profile),
    dialect: 'openai',
    scope: 'history',
    thinking: false,
    model: undefined,
    lastUserIndex: -1,
    report: (finding) => findings.push(finding),
  };
  scanToolBlocks(context, uniqueAcross, wideAbove);
  return findings;
}

test('the indexed scan of a wide block finds exactly what the linear search finds', () => {
  fc.assert(
    fc.property(wideDamaged, fc.boolean(), (messages, uniqueAcross) => {
      assert.deepEqual(
        scan(messages, 'openai', uniqueAcross, 0),
        scan(messages, 'openai', uniqueAcross, Number.POSITIVE_INFINITY),
      );
    }),
    { numRuns: runs * 2, seed },
  );
});

for (const profile of ['openai', 'deepseek', 'mistral', 'local'] as ProfileName[]) {
  test(`${profile}: a damaged wide block repairs valid, idempotently, losing nothing silently`, () => {
    fc.assert(
      fc.property(
        wideDamaged,
        fc.constantFrom<RepairOptions['unanswered']>('synthesize', 'strip'),
        fc.constantFrom<RepairOptions['orphans']>('to-user', 'drop'),
        fc.boolean(),
        (messages, unanswered, orphans, strongest) => {
          const options: RepairOptions = {
            profile,
            unanswered: unanswered ?? 'synthesize',
            orphans: orphans ?? 'to-user',
            ...(strongest ? { level: 'strongest' as const } : {}),
          };
          const frozen = deepFreeze(messages);
          const result = repair(frozen, options);
          // OpenAI caps a message at 128 calls; splitting a turn is left to the caller (remaining says so).
          const left = check(result.messages, options).filter((violation) => violation.rule !== 'tool-calls-too-many');
          assert.deepEqual(left, [], `left: ${JSON.stringify(left.map((violation) => violation.rule))}`);
          assert.equal(repair(result.messages, options).changed, false, 'idempotent');
          assertNothingLostSilently(frozen, result.messages, result.changes);
          assertUntouchedAreSameObjects(frozen, result.messages, result.changes);
        },
      ),
      { numRuns: runs, seed },
    );
  });
}

test('the native formats repair a damaged wide block valid and idempotently', () => {
  const formats = [
    ['anthropic-messages', toAnthropicMessages],
    ['gemini-contents', toGeminiContents],
    ['responses-input', toResponsesInput],
  ] as const;
  fc.assert(
    fc.property(wideDamaged, fc.constantFrom(0, 1, 2), (messages, which) => {
      const [format, convert] = formats[which] as (typeof formats)[number];
      const native = convert(messages);
      const result = repair(native, { format });
      assert.deepEqual(
        result.remaining.filter((violation) => violation.rule !== 'tool-call-id-duplicate'),
        [],
      );
      assert.deepEqual(
        check(result.messages, { format }).map((violation) => violation.rule),
        result.remaining.map((violation) => violation.rule),
      );
      assert.equal(repair(result.messages, { format }).changed, false, 'idempotent');
    }),
    { numRuns: runs, seed },
  );
});

// Linear, not quadratic: before the fix, 10^5 calls took 67 s to check and 184 s to repair. Each
// budget is ~10x what the linear code takes, far below the quadratic time. CPU time, not wall time:
// a test process starved by a busy machine must not fail for it.
function cpuMs(run: () => unknown): number {
  const started = process.cpuUsage();
  run();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}

function within(budgetMs: number, what: string, run: () => unknown): void {
  const elapsed = cpuMs(run);
  assert.ok(elapsed < budgetMs, `${what} took ${elapsed.toFixed(0)} ms of CPU (budget ${budgetMs} ms)`);
}

for (const shape of ['clean', 'damaged', 'constant-id', 'no-ids'] as const) {
  test(`one message with 10^5 calls (${shape}): check and repair in linear time`, () => {
    const messages = wideBlock(100_000, shape);
    within(10_000, 'check', () => check(messages, { profile: 'openai' }));
    within(10_000, 'check, ids unique across the request', () =>
      check(messages, { profile: 'deepseek', level: 'strongest' }),
    );
    let repaired: Message[] = [];
    within(20_000, 'repair', () => (repaired = repair(messages, { profile: 'openai' }).messages));
    assert.deepEqual(
      check(repaired, { profile: 'openai' }).filter((violation) => violation.rule !== 'tool-calls-too-many'),
      [],
    );
    within(20_000, 'repair, stripping unanswered calls, ids remapped', () =>
      repair(messages, { profile: 'mistral', unanswered: 'strip' }),
    );
  });
}

// The native formats, by ratio: 10x the calls must cost well under 30x the time (linear: ~10x; the
// quadratic searches this replaced: ~100x). The least CPU time of three runs each, to ride out a busy machine.
for (const [format, convert] of [
  ['anthropic-messages', toAnthropicMessages],
  ['gemini-contents', toGeminiContents],
  ['responses-input', toResponsesInput],
] as const) {
  test(`${format}: check and repair of one message with 1.5x10^4 calls cost linear time`, { timeout: 120_000 }, () => {
    const cost = (calls: number) => {
      const natives = (['damaged', 'constant-id', 'no-ids'] as const).map((shape) => convert(wideBlock(calls, shape)));
      let best = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 3; round += 1) {
        best = Math.min(
          best,
          cpuMs(() => {
            for (const native of natives) {
              check(native, { format });
              repair(native, { format });
            }
          }),
        );
      }
      return best;
    };
    const small = cost(1_500);
    const large = cost(15_000);
    assert.ok(
      large < 30 * small,
      `1.5x10^4 calls took ${large.toFixed(0)} ms, ${(large / small).toFixed(1)}x the ${small.toFixed(0)} ms of 1.5x10^3`,
    );
  });
}
