import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readLimitedBody } from '../../src/http/read-limited-body.js';

function streamOf(chunks: number[], onCancel?: () => void): ReadableStream<Uint8Array> {
  let index = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const size = chunks[index++];
      if (size === undefined) controller.close();
      else controller.enqueue(new Uint8Array(size).fill(index));
    },
    cancel: () => onCancel?.(),
  });
}

test('a body within the limit is read whole, chunks joined in order', async () => {
  const read = await readLimitedBody(streamOf([3, 2]), 5);
  assert.equal(read.ok, true);
  if (read.ok) assert.deepEqual([...read.bytes], [1, 1, 1, 2, 2]);
});

test('a body over the limit stops at the chunk that passes it and cancels the rest', async () => {
  let cancelled = false;
  const pulled: number[] = [];
  const chunks = [4, 4, 4, 4];
  const read = await readLimitedBody(
    streamOf(
      chunks.map((size, index) => {
        pulled.push(index);
        return size;
      }),
      () => {
        cancelled = true;
      },
    ),
    6,
  );
  assert.deepEqual(read, { ok: false, size: 8 });
  assert.equal(cancelled, true);
});

test('no body reads as empty', async () => {
  const read = await readLimitedBody(null, 10);
  assert.equal(read.ok && read.bytes.byteLength, 0);
});
