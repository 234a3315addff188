import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { check, type RepairOptions, repair } from '../../src/index.js';
import { deepFreeze } from '../support/lossless.js';
import { damagedNative } from '../support/native-generators.js';
import { assertNativeNothingLost, assertNativeUntouchedSame } from '../support/native-histories.js';

/**
 * The Anthropic request rules as properties, on histories damaged the generic way and then the
 * ways of the request rules (a call in a user message, an input as a string or not an object, an
 * id off the pattern, thinking not first, a blank text beside a call, a prefill ending in
 * whitespace or thinking), under every request setting (thinking on, off, unknown; a model with
 * and without prefill, with mid-conversation system messages, none): the repair at the strongest
 * level is valid for that request, idempotent, loses nothing silently, never edits or invents a
 * signed thinking block, and gives the same ids for the same input.
 */
const runs = Math.max(50, Math.floor(Number(process.env['UNSTUCK_PROPERTY_RUNS'] ?? 10_400) / 30));
const seed =
  process.env['UNSTUCK_PROPERTY_SEED'] === undefined ? 20261201 : Number(process.env['UNSTUCK_PROPERTY_SEED']);

type Op =
  | 'call-in-user'
  | 'input-as-string'
  | 'input-not-object'
  | 'id-off-pattern'
  | 'thinking-last'
  | 'blank-beside-call'
  | 'prefill-whitespace'
  | 'prefill-thinking';
const damage = fc.record({
  op: fc.constantFrom<Op>(
    'call-in-user',
    'input-as-string',
    'input-not-object',
    'id-off-pattern',
    'thinking-last',
    'blank-beside-call',
    'prefill-whitespace',
    'prefill-thinking',
  ),
  at: fc.nat({ max: 40 }),
});
const request = fc.record({
  thinking: fc.constantFrom<boolean | undefined>(undefined, false, true),
  model: fc.constantFrom<string | undefined>(undefined, 'claude-sonnet-4-5', 'claude-sonnet-4-6', 'claude-opus-4-8'),
});

type Block = Record<string, unknown>;
const blocksOf = (message: unknown): Block[] | undefined => {
  const content = (message as { content?: unknown } | null)?.['content'];
  return Array.isArray(content) ? (content as Block[]) : undefined;
};

function apply(history: unknown[], op: Op, at: number): unknown[] {
  const out = history.slice();
  if (op === 'prefill-whitespace') return [...out, { role: 'assistant', content: 'Sure, here it is: ' }];
  if (op === 'prefill-thinking')
    return [...out, { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 'sigP' }] }];
  // The assistant message with a tool_use at or after `at` (wrapping round).
  const n = out.length;
  for (let step = 0; step < n; step += 1) {
    const index = (at + step) % n;
    const message = out[index] as { role?: unknown } | null;
    const blocks = blocksOf(message);
    if (message?.role !== 'assistant' || blocks === undefined) continue;
    const position = blocks.findIndex((block) => block?.['type'] === 'tool_use');
    if (position < 0) continue;
    const call = blocks[position] as Block;
    const replace = (content: unknown[]) => {
      out[index] = { ...(message as object), content };
    };
    switch (op) {
      case 'call-in-user': {
        const next = out[index + 1];
        const nextBlocks = blocksOf(next);
        if (nextBlocks === undefined) return out;
        out[index + 1] = { ...(next as object), content: [...nextBlocks, { ...call, id: `toolu_user_${index}` }] };
        return out;
      }
      case 'input-as-string':
        replace(
          blocks.map((block, where) =>
            where === position ? { ...block, input: JSON.stringify(block['input']) } : block,
          ),
        );
        return out;
      case 'input-not-object':
        replace(blocks.map((block, where) => (where === position ? { ...block, input: [block['input']] } : block)));
        return out;
      case 'id-off-pattern': {
        const id = call['id'];
        const bad = `fc_${String(id)}|call:${String(id)}`;
        replace(blocks.map((block, where) => (where === position ? { ...block, id: bad } : block)));
        const next = out[index + 1];
        const nextBlocks = blocksOf(next);
        if (nextBlocks !== undefined)
          out[index + 1] = {
            ...(next as object),
            content: nextBlocks.map((block) =>
              block?.['tool_use_id'] === id ? { ...block, tool_use_id: bad } : block,
            ),
          };
        return out;
      }
      case 'thinking-last': {
        const thinking = blocks.filter((block) => block?.['type'] === 'thinking');
        if (thinking.length === 0) continue;
        replace([...blocks.filter((block) => block?.['type'] !== 'thinking'), ...thinking]);
        return out;
      }
      case 'blank-beside-call':
        replace([...blocks.slice(0, position), { type: 'text', text: ' \n' }, ...blocks.slice(position)]);
        return out;
    }
  }
  return out;
}

const histories = fc
  .tuple(damagedNative('anthropic-messages'), fc.array(damage, { minLength: 1, maxLength: 3 }), fc.boolean())
  .map(([{ valid, damaged }, damages, generic]) => {
    let history = generic ? damaged : valid;
    for (const step of damages) history = apply(history, step.op, step.at);
    return history;
  });

/** Only the caller can fix these: nothing left to send, a thinking block that only Anthropic can sign. */
const callersOwn = new Set(['empty-messages', 'thinking-block-missing']);

function thinkingBlocks(history: readonly unknown[]): Block[] {
  return history.flatMap((message) =>
    (blocksOf(message) ?? []).filter(
      (block) => block?.['type'] === 'thinking' || block?.['type'] === 'redacted_thinking',
    ),
  );
}

test('anthropic request rules: repaired at the strongest level, valid for the request, idempotent, nothing lost', () => {
  fc.assert(
    fc.property(histories, request, (history, settings) => {
      const options: RepairOptions = { level: 'strongest' };
      if (settings.thinking !== undefined) options.thinking = settings.thinking;
      if (settings.model !== undefined) options.model = settings.model;
      const frozen = deepFreeze(history);
      const result = repair(frozen, { ...options, format: 'anthropic-messages' });
      assert.deepEqual(
        check(result.messages, { ...options, format: 'anthropic-messages' }),
        result.remaining.map(({ why: _why, ...violation }) => violation),
        'what check still finds is exactly what remaining reports',
      );
      for (const left of result.remaining)
        assert.ok(callersOwn.has(left.rule), `nothing a repair can fix remains: ${left.rule} ${left.message}`);
      const again = repair(result.messages, { ...options, format: 'anthropic-messages' });
      assert.equal(again.changed, false, `idempotent, second pass changed: ${JSON.stringify(again.changes)}`);
      assertNativeNothingLost('anthropic-messages', frozen, result.messages, result.changes);
      assertNativeUntouchedSame(frozen, result.messages, result.changes);
      // Signed thinking blocks are never edited or invented: each one out is one that came in, the same object.
      const came = new Set(thinkingBlocks(frozen));
      for (const block of thinkingBlocks(result.messages))
        assert.ok(came.has(block), `a thinking block out that did not come in: ${JSON.stringify(block)}`);
      // Generated ids are a function of the input: a copy of it repairs to the same messages.
      const copy = repair(structuredClone(history), { ...options, format: 'anthropic-messages' });
      assert.deepEqual(copy.messages, result.messages, 'the same input, the same output (ids included)');
    }),
    { numRuns: runs * 3, seed },
  );
});

test('anthropic request rules: an id on the pattern, used once, is never rewritten', () => {
  fc.assert(
    fc.property(histories, (history) => {
      const frozen = deepFreeze(history);
      const result = repair(frozen, { level: 'strongest', format: 'anthropic-messages' });
      const count = new Map<unknown, number>();
      for (const message of frozen)
        for (const block of blocksOf(message) ?? [])
          if (block?.['type'] === 'tool_use') count.set(block['id'], (count.get(block['id']) ?? 0) + 1);
      const out = new Set<unknown>();
      for (const message of result.messages)
        for (const block of blocksOf(message) ?? []) if (block?.['type'] === 'tool_use') out.add(block['id']);
      const named = new Set(result.changes.map((change) => change.toolCallId));
      for (const [id, times] of count) {
        if (times !== 1 || typeof id !== 'string' || !/^[a-zA-Z0-9_-]+$/.test(id)) continue;
        assert.ok(out.has(id) || named.has(id), `${id} was rewritten or lost without a change naming it`);
      }
    }),
    { numRuns: runs, seed },
  );
});
