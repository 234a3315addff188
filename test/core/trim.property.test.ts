import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  check,
  createTokenEstimator,
  type FormatName,
  fromAnthropicMessages,
  fromGeminiContents,
  fromResponsesInput,
  isHealableRule,
  type Message,
  type ProfileName,
  TRIMMED_RESULT,
  trim,
} from '../../src/index.js';
import { corrupted, shapeOf, validHistory } from '../support/histories.js';
import { deepFreeze } from '../support/lossless.js';
import { validNative } from '../support/native-generators.js';

/**
 * The trim guarantees, as properties over generated valid histories in all four wire formats, cut
 * to random budgets: the output is valid, no tool block is split, everything left out is named,
 * and a history under its budget comes back as it was. UNSTUCK_PROPERTY_RUNS scales the run.
 */
const runs = Math.max(60, Math.floor(Number(process.env['UNSTUCK_PROPERTY_RUNS'] ?? 10_400) / 40));
const seed =
  process.env['UNSTUCK_PROPERTY_SEED'] === undefined ? 20261201 : Number(process.env['UNSTUCK_PROPERTY_SEED']);
const chatProfiles: ProfileName[] = ['openai', 'deepseek', 'mistral', 'anthropic'];

interface Case {
  name: string;
  format: FormatName;
  history: fc.Arbitrary<unknown[]>;
  /** Violations of the format's rules (at history scope for chat). */
  violations(items: readonly unknown[]): unknown[];
  /** The converted (chat) form, with each message's native index. */
  convert(items: readonly unknown[]): { messages: Message[]; origins: number[] };
}

const identity = (items: readonly unknown[]) => ({
  messages: items as Message[],
  origins: items.map((_, index) => index),
});
const cases: Case[] = [
  ...chatProfiles.map(
    (profile): Case => ({
      name: `openai-chat (${profile})`,
      format: 'openai-chat',
      history: validHistory(shapeOf(profile)),
      violations: (items) => check(items as Message[], { profile }),
      convert: identity,
    }),
  ),
  {
    name: 'anthropic-messages',
    format: 'anthropic-messages',
    history: validNative('anthropic-messages'),
    violations: (items) => check(items, { format: 'anthropic-messages' }),
    convert: fromAnthropicMessages,
  },
  {
    name: 'gemini-contents',
    format: 'gemini-contents',
    history: validNative('gemini-contents'),
    violations: (items) => check(items, { format: 'gemini-contents' }),
    convert: fromGeminiContents,
  },
  {
    name: 'responses-input',
    format: 'responses-input',
    history: validNative('responses-input'),
    violations: (items) => check(items, { format: 'responses-input' }),
    convert: fromResponsesInput,
  },
];

/** The native index ranges [first, last] of every tool block: a call message through its last result. */
function blocksOf(items: readonly unknown[], convert: Case['convert']): [number, number][] {
  const { messages, origins } = convert(items);
  const blocks: [number, number][] = [];
  messages.forEach((message, index) => {
    if (message.role !== 'assistant' || !Array.isArray(message.tool_calls) || message.tool_calls.length === 0) return;
    const waiting = new Set(message.tool_calls.map((call) => call.id));
    let last = index;
    for (let next = index + 1; next < messages.length && waiting.size > 0; next += 1) {
      const candidate = messages[next] as Message;
      if (candidate.role === 'assistant' && Array.isArray(candidate.tool_calls) && candidate.tool_calls.length > 0)
        break;
      if (candidate.role === 'tool' && waiting.delete(candidate.tool_call_id)) last = next;
    }
    blocks.push([origins[index] as number, origins[last] as number]);
  });
  return blocks;
}

/** A budget somewhere between almost nothing and a little over the whole history. */
const budget = fc.double({ min: 0.02, max: 1.2, noNaN: true });

for (const testCase of cases) {
  const { format } = testCase;
  const estimator = () => createTokenEstimator();

  test(`${testCase.name}: trim keeps a valid history valid, splits no tool block and names all it left out`, () => {
    fc.assert(
      fc.property(testCase.history, budget, (history, fraction) => {
        const frozen = deepFreeze(history);
        assert.deepEqual(testCase.violations(frozen), [], 'the generated history is valid');
        const total = estimator().tokens(frozen) - 1;
        const maxTokens = Math.max(1, Math.floor(total * fraction));
        const result = trim(frozen, { maxTokens, format });
        assert.deepEqual(
          testCase.violations(result.items),
          [],
          `valid after trim to ${maxTokens}: omitted ${JSON.stringify(result.omitted)}`,
        );
        // Nothing left out silently: the output is the input minus `omitted`, the same objects in order.
        const omitted = new Set(result.omitted);
        assert.equal(omitted.size, result.omitted.length, 'each index once');
        assert.deepEqual(
          [...result.omitted].sort((a, b) => a - b),
          result.omitted,
          'ascending',
        );
        const kept = frozen.filter((_, index) => !omitted.has(index));
        assert.equal(result.items.length, kept.length);
        result.items.forEach((item, index) => {
          assert.equal(item, kept[index], 'kept elements are the same objects');
        });
        assert.equal(result.changed, result.omitted.length > 0);
        assert.deepEqual(result.cleared, []);
        if (result.fits) assert.ok(result.estimatedTokens <= maxTokens, 'fits means under the budget');
        else assert.ok(result.estimatedTokens > maxTokens);
        // No tool block split: all of a block's elements are kept, or none.
        for (const [first, last] of blocksOf(frozen, testCase.convert)) {
          const states = new Set<boolean>();
          for (let index = first; index <= last; index += 1) states.add(omitted.has(index));
          assert.equal(states.size, 1, `block ${first}..${last} is whole (omitted ${JSON.stringify(result.omitted)})`);
        }
        // Trimming what fits again changes nothing.
        if (result.fits) {
          const again = trim(result.items, { maxTokens, format });
          assert.equal(again.items, result.items);
          assert.equal(again.changed, false);
        }
      }),
      { numRuns: runs, seed },
    );
  });

  test(`${testCase.name}: a history under its budget comes back as the same array`, () => {
    fc.assert(
      fc.property(testCase.history, fc.nat({ max: 1000 }), (history, slack) => {
        const frozen = deepFreeze(history);
        const maxTokens = estimator().tokens(frozen) + slack;
        for (const mode of ['drop', 'placeholder'] as const) {
          const result = trim(frozen, { maxTokens, format, mode });
          assert.equal(result.items, frozen);
          assert.equal(result.changed, false);
          assert.deepEqual(result.omitted, []);
          assert.equal(result.fits, true);
        }
      }),
      { numRuns: Math.max(30, Math.floor(runs / 3)), seed },
    );
  });

  test(`${testCase.name}: placeholder mode keeps every element and every call paired with its result`, () => {
    fc.assert(
      fc.property(testCase.history, budget, fc.nat({ max: 4 }), (history, fraction, keepToolResults) => {
        const frozen = deepFreeze(history);
        const maxTokens = Math.max(1, Math.floor((estimator().tokens(frozen) - 1) * fraction));
        const result = trim(frozen, { maxTokens, format, mode: 'placeholder', keepToolResults });
        assert.equal(result.items.length, frozen.length, 'no element left out');
        assert.deepEqual(result.omitted, []);
        assert.deepEqual(testCase.violations(result.items), [], 'still valid');
        const cleared = new Set(result.cleared);
        result.items.forEach((item, index) => {
          if (!cleared.has(index)) assert.equal(item, frozen[index], 'untouched elements are the same objects');
        });
        // The same calls and results, in the same places; cleared results say so.
        const before = testCase.convert(frozen).messages;
        const after = testCase.convert(result.items).messages;
        assert.equal(after.length, before.length);
        after.forEach((message, index) => {
          const original = before[index] as Message;
          assert.equal(message.role, original.role);
          assert.deepEqual(
            message.tool_calls?.map((call) => call.id),
            original.tool_calls?.map((call) => call.id),
          );
          assert.equal(message.tool_call_id, original.tool_call_id);
          if (message.role === 'tool' && message.content !== original.content)
            assert.ok(JSON.stringify(message.content).includes(TRIMMED_RESULT), 'a changed result holds the marker');
        });
        assert.ok(result.fits || result.estimatedTokens > maxTokens);
        const again = trim(result.items, { maxTokens, format, mode: 'placeholder', keepToolResults });
        if (result.fits) assert.equal(again.items, result.items, 'idempotent once it fits');
      }),
      { numRuns: runs, seed },
    );
  });
}

// On a damaged history trim makes no pairing problem of its own: every one left in its output was
// already in its input (same rule, same call id). Repair first to get a valid one (the test above).
for (const profile of ['openai', 'deepseek'] as ProfileName[]) {
  test(`openai-chat (${profile}), damaged: trim adds no pairing violation`, () => {
    fc.assert(
      fc.property(corrupted(shapeOf(profile)), budget, ({ damaged }, fraction) => {
        const frozen = deepFreeze(damaged);
        const maxTokens = Math.max(1, Math.floor((createTokenEstimator().tokens(frozen) - 1) * fraction));
        const key = (violation: { rule: string; toolCallId?: string }) =>
          `${violation.rule}:${violation.toolCallId ?? ''}`;
        const before = new Set(
          check(frozen, { profile })
            .filter((violation) => isHealableRule(violation.rule))
            .map(key),
        );
        for (const mode of ['drop', 'placeholder'] as const) {
          const result = trim(frozen, { maxTokens, mode });
          const added = check(result.items, { profile }).filter(
            (violation) => isHealableRule(violation.rule) && !before.has(key(violation)),
          );
          assert.deepEqual(
            added,
            [],
            `${mode}: new pairing violations after trimming to ${maxTokens} (omitted ${JSON.stringify(result.omitted)})`,
          );
        }
      }),
      { numRuns: runs, seed },
    );
  });
}
