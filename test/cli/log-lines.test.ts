import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { createLogLines } from '../../src/cli/log-lines.js';

test('lines logged in one turn of the event loop go out in one write, in order', async () => {
  const writes: string[] = [];
  const lines = createLogLines({ write: (text) => writes.push(text) });
  lines.line({ id: 'a' });
  lines.line({ id: 'b' });
  assert.deepEqual(writes, [], 'nothing is written before the turn ends');
  await turn();
  assert.deepEqual(writes, ['{"id":"a"}\n{"id":"b"}\n']);
  lines.line({ id: 'c' });
  await turn();
  assert.deepEqual(writes, ['{"id":"a"}\n{"id":"b"}\n', '{"id":"c"}\n']);
});

test('flush writes what is pending at once, and nothing twice', async () => {
  const writes: string[] = [];
  const lines = createLogLines({ write: (text) => writes.push(text) });
  lines.line({ id: 'a' });
  lines.flush();
  assert.deepEqual(writes, ['{"id":"a"}\n']);
  await turn();
  lines.flush();
  assert.deepEqual(writes, ['{"id":"a"}\n']);
});
