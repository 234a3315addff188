import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  check,
  fromAnthropicMessages,
  fromGeminiContents,
  fromResponsesInput,
  type Message,
  type NativeFormatName,
  type RepairOptions,
  repair,
  toAnthropicMessages,
  toGeminiContents,
  toResponsesInput,
} from '../../src/index.js';
import { deepFreeze } from '../support/lossless.js';
import { damagedNative, validNative } from '../support/native-generators.js';
import { assertNativeNothingLost, assertNativeUntouchedSame } from '../support/native-histories.js';

/**
 * The repair guarantees for each native format, as properties: the converters round-trip exactly,
 * valid histories come back untouched, damaged ones repair valid, idempotently, losing nothing
 * silently. UNSTUCK_PROPERTY_RUNS scales the run.
 */
const runs = Math.max(50, Math.floor(Number(process.env['UNSTUCK_PROPERTY_RUNS'] ?? 10_400) / 30));
const seed =
  process.env['UNSTUCK_PROPERTY_SEED'] === undefined ? 20261130 : Number(process.env['UNSTUCK_PROPERTY_SEED']);
const formats: NativeFormatName[] = ['anthropic-messages', 'gemini-contents', 'responses-input'];
const converters: Record<
  NativeFormatName,
  { from: (input: unknown[]) => { messages: Message[] }; to: (messages: Message[]) => unknown[] }
> = {
  'anthropic-messages': { from: fromAnthropicMessages, to: toAnthropicMessages },
  'gemini-contents': { from: fromGeminiContents, to: toGeminiContents },
  'responses-input': { from: fromResponsesInput, to: toResponsesInput },
};
// Emptied by the damage: nothing left to send, which only the caller can fix.
const callersOwn = new Set(['empty-messages']);

for (const format of formats) {
  const { from, to } = converters[format];

  test(`${format}: to(from(x)) is x, element for element the same objects (valid and damaged histories)`, () => {
    fc.assert(
      fc.property(damagedNative(format), ({ valid, damaged }) => {
        for (const history of [valid, damaged]) {
          const frozen = deepFreeze(history);
          const back = to(from(frozen).messages);
          assert.deepEqual(back, frozen);
          back.forEach((element, index) => {
            assert.equal(element, frozen[index]);
          });
        }
      }),
      { numRuns: runs, seed },
    );
  });

  test(`${format}: a valid history comes back as the same array, no changes`, () => {
    fc.assert(
      fc.property(validNative(format), (history) => {
        const frozen = deepFreeze(history);
        assert.deepEqual(check(frozen, { format }), []);
        const result = repair(frozen, { format });
        assert.equal(result.messages, frozen);
        assert.deepEqual(result.changes, []);
      }),
      { numRuns: runs, seed },
    );
  });

  test(`${format}: damaged histories repair valid, idempotently, losing nothing silently`, () => {
    fc.assert(
      fc.property(
        damagedNative(format),
        fc.constantFrom<RepairOptions['unanswered']>('synthesize', 'strip'),
        fc.constantFrom<RepairOptions['orphans']>('to-user', 'drop'),
        ({ damaged }, unanswered, orphans) => {
          const options: RepairOptions = {
            unanswered: unanswered ?? 'synthesize',
            orphans: orphans ?? 'to-user',
          };
          const frozen = deepFreeze(damaged);
          const result = repair(frozen, { ...options, format });
          const left = check(result.messages, { ...options, format });
          assert.deepEqual(
            left,
            result.remaining.map(({ why: _why, ...violation }) => violation),
            'what check still finds is exactly what remaining reports',
          );
          for (const violation of result.remaining)
            assert.ok(
              callersOwn.has(violation.rule),
              `nothing a repair can fix remains: ${violation.rule} ${violation.message}`,
            );
          const again = repair(result.messages, { ...options, format });
          assert.equal(
            again.changed,
            false,
            `repair is idempotent, second pass changed: ${JSON.stringify(again.changes)}`,
          );
          assert.equal(again.messages, result.messages);
          assertNativeNothingLost(format, frozen, result.messages, result.changes);
          assertNativeUntouchedSame(frozen, result.messages, result.changes);
          for (const change of result.changes)
            assert.ok(change.index >= 0 && change.index < frozen.length, 'a change names a native input index');
          if (result.changes.length === 0) assert.equal(result.messages, frozen);
        },
      ),
      { numRuns: runs * 3, seed },
    );
  });
}
