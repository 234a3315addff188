import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLoopGuard } from '../../src/agent/loop-guard.js';
import type { ToolOutcome } from '../../src/agent/run-tool-block.js';
import { CANCELLED } from '../../src/agent/run-tool-block.js';

const failed = (name: string, result = 'Error: no'): ToolOutcome => ({
  id: `call_${name}`,
  name,
  arguments: '{}',
  result,
  isError: true,
});
const succeeded = (name: string): ToolOutcome => ({ ...failed(name), result: 'ok', isError: false });

test('loop guard: a hint after the third failure in a row of one tool, then the count starts again', () => {
  const guard = createLoopGuard({ hintAfterFailures: 3, role: 'system' });
  assert.deepEqual(guard.hintsAfter([failed('read')]), []);
  assert.deepEqual(guard.hintsAfter([failed('read')]), []);
  const hints = guard.hintsAfter([failed('read')]);
  assert.equal(hints.length, 1);
  assert.equal(hints[0]?.role, 'system');
  assert.match(String(hints[0]?.content), /^\[loop guard\] The tool "read" failed 3 times in a row/);
  assert.deepEqual(guard.hintsAfter([failed('read'), failed('read')]), [], 'counted afresh after the hint');
  assert.equal(guard.hintsAfter([failed('read')]).length, 1);
});

test('loop guard: a success or a cancelled call resets the count; tools are counted apart', () => {
  const guard = createLoopGuard({ hintAfterFailures: 2, role: 'user' });
  assert.deepEqual(guard.hintsAfter([failed('a'), succeeded('a')]), []);
  assert.deepEqual(guard.hintsAfter([failed('a'), failed('b')]), []);
  assert.deepEqual(guard.hintsAfter([failed('a', CANCELLED)]), [], 'a cancelled call is not a failure');
  assert.deepEqual(guard.hintsAfter([failed('a')]), []);
  const hints = guard.hintsAfter([failed('b'), failed('a')]);
  assert.deepEqual(
    hints.map((hint) => [hint.role, /"(\w)"/.exec(String(hint.content))?.[1]]),
    [
      ['user', 'b'],
      ['user', 'a'],
    ],
  );
});

test('loop guard: two failures of one tool in one block count twice', () => {
  const guard = createLoopGuard({ hintAfterFailures: 2, role: 'system' });
  assert.equal(guard.hintsAfter([failed('a'), failed('a')]).length, 1);
});
