import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isUnstuckError } from '../../src/core/errors.js';
import { parseScript } from '../../src/emulator/index.js';

test('parseScript reads an array or {steps}, with every field', () => {
  const steps = [
    {
      text: 'a',
      reasoning: 'r',
      toolCalls: [{ id: 'x', name: 'f', arguments: '{}' }],
      stream: { chunkSize: 2, delayMs: 5 },
    },
    { fault: { status: 429, retryAfter: 1 } },
    { fault: { stall: 10 } },
    { fault: { disconnectAfterChunks: 2 } },
  ];
  assert.deepEqual(parseScript(steps), steps);
  assert.deepEqual(parseScript({ steps }), steps);
  assert.deepEqual(parseScript([{ toolCalls: [{ name: 'f' }] }]), [{ toolCalls: [{ name: 'f', arguments: '{}' }] }]);
});

test('parseScript names the step and field that is wrong', () => {
  const cases: [unknown, RegExp][] = [
    ['nope', /JSON array of steps/],
    [[{ txt: 'a' }], /step 0: unknown field 'txt'/],
    [[{}, { toolCalls: [{ arguments: '{}' }] }], /step 1\.toolCalls\[0\]\.name: expected a string/],
    [[{ fault: { status: 404 } }], /step 0\.fault: expected/],
    [[{ stream: { chunkSize: 0 } }], /chunkSize: expected a number >= 1/],
  ];
  for (const [input, pattern] of cases) {
    assert.throws(
      () => parseScript(input, 'script.json'),
      (error: unknown) =>
        isUnstuckError(error) &&
        error.code === 'INPUT_INVALID' &&
        pattern.test(error.message) &&
        error.file === 'script.json',
    );
  }
});
