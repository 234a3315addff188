import type { ServerResponse } from 'node:http';
import type { LocalAnswer } from '../openai-error-response.js';
import { openAIError } from '../openai-error-response.js';

/* What both node carriers do with a node:http response: answer whole, fail, cut, wait for drain. */

/** A whole answer the carrier gives itself (a 400, 413, 421, 502); nothing once the head has gone out. */
export function writeAnswer(outgoing: ServerResponse, answer: LocalAnswer): void {
  if (outgoing.headersSent || outgoing.destroyed) return;
  const body = answer.body;
  outgoing.writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(body) });
  outgoing.end(body);
}

/** A request node:http accepted but the carrier cannot represent (a request target no URL can hold). */
export function badRequest(error: unknown): LocalAnswer {
  const message = error instanceof Error ? error.message : String(error);
  return openAIError(400, `unstuck proxy: bad request (${message})`, 'bad_request');
}

/** An error that escaped a carrier for one request: that request fails (a 502 if nothing was sent yet, else a cut answer). */
export function failRelay(outgoing: ServerResponse, error: unknown): void {
  if (!outgoing.headersSent) {
    writeAnswer(
      outgoing,
      openAIError(
        502,
        `unstuck proxy: internal error (${error instanceof Error ? error.message : String(error)})`,
        'internal_error',
      ),
    );
    return;
  }
  cutResponse(outgoing);
}

/**
 * Ends a response without its final chunk, so the client sees a truncated response as an error,
 * never as a complete one. `end` on the socket flushes what was already written first (destroy
 * would drop it); a client that does not read it in time is cut off.
 */
export function cutResponse(outgoing: ServerResponse): void {
  const socket = outgoing.socket;
  if (socket === null || outgoing.destroyed) {
    outgoing.destroy();
    return;
  }
  while (socket.writableCorked > 0) socket.uncork();
  socket.end();
  setTimeout(() => socket.destroy(), 5000).unref();
}

/** Resolves on `drain`, or on `close` (a client that left never drains); leaves no listener behind. */
export function drained(outgoing: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      outgoing.off('drain', done);
      outgoing.off('close', done);
      resolve();
    };
    outgoing.on('drain', done);
    outgoing.on('close', done);
  });
}
