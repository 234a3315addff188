import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { check, type Message, type ProfileName, type RepairOptions, repair } from '../../src/index.js';
import { corrupted, shapeOf, validHistory } from '../support/histories.js';
import { assertNothingLostSilently, assertUntouchedAreSameObjects, deepFreeze } from '../support/lossless.js';

/**
 * The repair guarantees, as properties over generated histories damaged the way agents damage
 * them. UNSTUCK_PROPERTY_RUNS scales the run (`npm run test:property` runs 20x more).
 */
const profiles: ProfileName[] = ['openai', 'deepseek', 'qwen', 'mistral', 'moonshot', 'groq', 'anthropic', 'local'];
const total = Number(process.env['UNSTUCK_PROPERTY_RUNS'] ?? 10_400);
const perProfile = Math.ceil(total / profiles.length / 2);
const seed =
  process.env['UNSTUCK_PROPERTY_SEED'] === undefined ? 20261130 : Number(process.env['UNSTUCK_PROPERTY_SEED']);

function assertGuarantees(input: Message[], options: RepairOptions): void {
  const frozen = deepFreeze(input); // the input is never mutated: a write to it would throw
  const result = repair(frozen, options);
  const left = check(result.messages, options);
  assert.deepEqual(
    left,
    result.remaining.map(({ why: _why, ...violation }) => violation),
    'what check still finds is exactly what remaining reports',
  );
  assert.deepEqual(
    result.remaining,
    [],
    `nothing should remain for a history: ${JSON.stringify(result.remaining.map((r) => r.rule))}`,
  );
  const again = repair(result.messages, options);
  assert.equal(
    again.changed,
    false,
    `repair is idempotent, second pass changed: ${JSON.stringify(again.changes.map((c) => c.kind))}`,
  );
  assert.equal(again.messages, result.messages);
  assertNothingLostSilently(frozen, result.messages, result.changes);
  assertUntouchedAreSameObjects(frozen, result.messages, result.changes);
  for (const change of result.changes)
    assert.ok(change.index >= 0 && change.index < frozen.length, 'a change names an input index');
}

for (const profile of profiles) {
  const shape = shapeOf(profile);

  test(`${profile}: a valid history comes back as the same array, no changes`, () => {
    fc.assert(
      fc.property(validHistory(shape), (history) => {
        const frozen = deepFreeze(history);
        assert.deepEqual(check(frozen, { profile }), []);
        const result = repair(frozen, { profile });
        assert.equal(result.messages, frozen);
        assert.deepEqual(result.changes, []);
      }),
      { numRuns: Math.max(50, Math.floor(perProfile / 5)), seed },
    );
  });

  test(`${profile}: damaged histories repair valid, idempotently, losing nothing silently`, () => {
    fc.assert(
      fc.property(
        corrupted(shape),
        fc.constantFrom<RepairOptions['unanswered']>('synthesize', 'strip'),
        fc.constantFrom<RepairOptions['orphans']>('to-user', 'drop'),
        ({ damaged }, unanswered, orphans) => {
          assertGuarantees(damaged, { profile, unanswered: unanswered ?? 'synthesize', orphans: orphans ?? 'to-user' });
        },
      ),
      { numRuns: perProfile, seed },
    );
  });

  test(`${profile}: the strongest level without folding keeps every guarantee and every user message`, () => {
    fc.assert(
      fc.property(corrupted(shape), ({ damaged }) => {
        const options: RepairOptions = { profile, level: 'strongest', foldRepeatedUserMessages: false };
        assertGuarantees(damaged, options);
        // Roles that must alternate are merged (their text kept); everywhere else no user message goes.
        if (profile !== 'anthropic' && profile !== 'local') {
          const users = (messages: readonly Message[]) =>
            messages.filter(
              (message) => message.role === 'user' && message.content !== null && message.content !== undefined,
            ).length;
          assert.ok(users(repair(damaged, options).messages) >= users(damaged), 'no user message is removed');
        }
      }),
      { numRuns: Math.max(50, Math.floor(perProfile / 4)), seed },
    );
  });

  test(`${profile}: the strongest level keeps every guarantee`, () => {
    fc.assert(
      fc.property(corrupted(shape), ({ damaged }) => assertGuarantees(damaged, { profile, level: 'strongest' })),
      { numRuns: Math.max(50, Math.floor(perProfile / 2)), seed },
    );
  });
}
