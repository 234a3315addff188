import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { recogniseFormat, WIRE_RECOGNISERS } from '../../src/core/detect-format.js';
import { check, type FormatName } from '../../src/index.js';
import { shapeOf, validHistory } from '../support/histories.js';
import { validNative } from '../support/native-generators.js';
import { near } from '../support/near-wire-values.js';

/**
 * Recognise or refuse (docs/decisions/recognise-or-refuse.md), as properties: any JSON document is
 * either recognised as exactly one wire, on evidence that names it, or refused with one line; valid
 * histories of each wire are still recognised; a valid history whose required field was dropped,
 * renamed or retyped is refused, or recognised and then not valid — never valid by default.
 */
const runs = Math.max(200, Math.floor(Number(process.env['UNSTUCK_PROPERTY_RUNS'] ?? 10_400) / 10));
const seed =
  process.env['UNSTUCK_PROPERTY_SEED'] === undefined ? 20261202 : Number(process.env['UNSTUCK_PROPERTY_SEED']);

const anyDocument = fc.oneof(fc.jsonValue(), near, fc.array(near, { maxLength: 5 }));

function assertOneLine(text: string): void {
  assert.ok(text.length > 0);
  assert.ok(!text.includes('\n'), text);
}

test('any JSON document is recognised as exactly one wire on evidence that names it, or refused in one line', () => {
  fc.assert(
    fc.property(anyDocument, (value) => {
      const answer = recogniseFormat(value);
      if (answer.format === undefined) {
        assertOneLine(answer.why);
        return;
      }
      assertOneLine(answer.evidence);
      assert.match(answer.evidence, new RegExp(`\\(${answer.format}\\)$`));
      // Exactly one recogniser takes it: no order had to choose.
      const items = Array.isArray(value)
        ? value
        : ((value as Record<string, unknown>)[answer.key as string] as unknown[]);
      const body = Array.isArray(value) ? undefined : (value as Record<string, unknown>);
      const taking = WIRE_RECOGNISERS.filter(
        (recogniser) =>
          (body === undefined || recogniser.key === answer.key) &&
          !('why' in recogniser.recognise(items, body, answer.key ?? '')),
      );
      assert.deepEqual(
        taking.map((recogniser) => recogniser.format),
        [answer.format],
      );
    }),
    { numRuns: runs * 5, seed },
  );
});

const chat = validHistory(shapeOf('openai'));
const hasAnthropicBlock = (history: unknown[]) =>
  JSON.stringify(history).match(/"type":"(tool_use|tool_result|thinking)"/) !== null;

test('valid histories of each wire are recognised as it, bare and in their request body', () => {
  fc.assert(
    fc.property(chat, (history) => {
      assert.equal(recogniseFormat(history).format, 'openai-chat');
      assert.equal(recogniseFormat({ model: 'm', messages: history }).format, 'openai-chat');
    }),
    { numRuns: runs, seed },
  );
  fc.assert(
    fc.property(validNative('anthropic-messages'), (history) => {
      // Plain text messages read the same in both: OpenAI chat, by the documented order, unless the body says system.
      assert.equal(recogniseFormat(history).format, hasAnthropicBlock(history) ? 'anthropic-messages' : 'openai-chat');
      assert.equal(recogniseFormat({ system: 's', messages: history }).format, 'anthropic-messages');
    }),
    { numRuns: runs, seed },
  );
  for (const format of ['gemini-contents', 'responses-input'] as const) {
    fc.assert(
      fc.property(validNative(format), (history) => {
        assert.equal(recogniseFormat(history).format, format);
        assert.equal(
          recogniseFormat({ [format === 'gemini-contents' ? 'contents' : 'input']: history }).format,
          format,
        );
      }),
      { numRuns: runs, seed },
    );
  }
});

/** The fields each element of a wire must have, with their types; a mutation drops, renames or retypes one. */
const REQUIRED: Record<FormatName, (element: Record<string, unknown>) => string[]> = {
  'openai-chat': (element) => [
    'role',
    ...(Array.isArray(element['tool_calls']) ? ['tool_calls'] : ['content']),
    ...(element['role'] === 'tool' ? ['tool_call_id'] : []),
  ],
  'anthropic-messages': () => ['role', 'content'],
  'gemini-contents': () => ['parts'],
  'responses-input': (element) =>
    element['type'] === 'function_call'
      ? ['type', 'call_id', 'name', 'arguments']
      : element['type'] === 'function_call_output'
        ? ['type', 'call_id', 'output']
        : typeof element['type'] === 'string' && element['type'] !== 'message'
          ? ['type'] // reasoning, the other call kinds and their outputs, MCP items: their type is what places them
          : ['role', 'content'],
};

type Mutation = 'drop' | 'rename' | 'retype-number' | 'retype-object';
const mutation = fc.record({
  at: fc.nat(),
  field: fc.nat(),
  how: fc.constantFrom<Mutation>('drop', 'rename', 'retype-number', 'retype-object'),
});

function mutate(format: FormatName, history: unknown[], step: { at: number; field: number; how: Mutation }): unknown[] {
  const at = step.at % history.length;
  const element = { ...(history[at] as Record<string, unknown>) };
  const fields = REQUIRED[format](element);
  const field = fields[step.field % fields.length] as string;
  const value = element[field];
  delete element[field];
  if (step.how === 'rename') element[`${field}_`] = value;
  if (step.how === 'retype-number') element[field] = 7;
  if (step.how === 'retype-object') element[field] = { value: 7 };
  const out = history.slice();
  out[at] = element;
  return out;
}

const valid: Record<FormatName, fc.Arbitrary<unknown[]>> = {
  'openai-chat': chat as fc.Arbitrary<unknown[]>,
  'anthropic-messages': validNative('anthropic-messages'),
  'gemini-contents': validNative('gemini-contents'),
  'responses-input': validNative('responses-input'),
};

for (const format of Object.keys(valid) as FormatName[]) {
  test(`${format}: a required field dropped, renamed or retyped is refused, or recognised and not valid`, () => {
    fc.assert(
      fc.property(valid[format], mutation, (history, step) => {
        fc.pre(history.length > 0);
        const mutated = mutate(format, history, step);
        const answer = recogniseFormat(mutated);
        if (answer.format === undefined) return;
        assert.notDeepEqual(
          check(mutated as never, { format: answer.format }),
          [],
          `${JSON.stringify(mutated)} was called valid ${answer.format} (${answer.evidence})`,
        );
      }),
      { numRuns: runs, seed },
    );
  });
}
