import type { IncomingMessage } from 'node:http';

/**
 * A node message body as a web stream that reads only when asked. Cancelling it (a handler that
 * refused an oversized body) discards the rest instead of destroying the socket, so a 413 still
 * reaches the client. A message cut off before its end (a reset) errors the stream.
 */
export function readableOf(incoming: IncomingMessage): ReadableStream<Uint8Array> {
  let open = true;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      incoming.pause();
      incoming.on('data', (chunk: Buffer) => {
        if (!open) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) incoming.pause();
      });
      incoming.once('end', () => {
        if (open) controller.close();
        open = false;
      });
      const fail = (error: Error): void => {
        if (open) controller.error(error);
        open = false;
      };
      incoming.once('error', fail);
      incoming.once('close', () => {
        if (!incoming.complete) fail(new Error('the connection closed before the end of the body'));
      });
    },
    pull() {
      incoming.resume();
    },
    cancel() {
      open = false;
      incoming.resume();
    },
  });
}
