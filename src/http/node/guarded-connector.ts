import type { Socket } from 'node:net';
import { buildConnector } from 'undici';

/**
 * The upstream sockets of the native relay, each guarded against undici 6's crash on a peer that
 * closes while an answer is held back (docs/decisions/http-upstream-fin-while-paused.md).
 *
 * When a handler returns `false` from `onData` (the client is slower than the upstream), undici
 * pauses its HTTP/1 parser. If the upstream then closes the connection (`Connection: close`, an
 * answer delimited by the close, a lying `Content-Length`) and undici has read everything, the
 * socket's `end` handler calls `Parser.finish()`, which asserts that the parser is not paused:
 * an `AssertionError` thrown from a socket event, which ends the process (nodejs/undici#5360,
 * fixed only in undici 8, which needs Node 22). Here that one assertion, thrown while `end` is
 * emitted, becomes an error of the socket instead: undici fails the request in flight with it, and
 * the relay (which has been given every byte the upstream sent) decides whether its answer was
 * complete (`isUpstreamEndedWhilePaused`).
 */
export function createGuardedConnector(): buildConnector.connector {
  const connect = buildConnector({});
  return (options, callback) =>
    connect(options, (error, socket) => {
      if (error === null && socket !== null && socket !== undefined) guardEnd(socket);
      callback(...([error, socket] as Parameters<buildConnector.Callback>));
    });
}

const ENDED_WHILE_PAUSED = 'UNSTUCK_UPSTREAM_ENDED_WHILE_PAUSED';

/** The error a guarded socket fails with when its peer closed while the answer was held back. */
export function isUpstreamEndedWhilePaused(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === ENDED_WHILE_PAUSED;
}

function guardEnd(socket: Socket): void {
  const emit = socket.emit as (this: Socket, event: string | symbol, ...args: unknown[]) => boolean;
  socket.emit = function guardedEmit(this: Socket, event: string | symbol, ...args: unknown[]): boolean {
    if (event !== 'end') return emit.call(this, event, ...args);
    try {
      return emit.call(this, event, ...args);
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'ERR_ASSERTION') throw error;
      this.destroy(
        Object.assign(
          new Error('the upstream closed the connection while its answer was held back for a slow client'),
          { code: ENDED_WHILE_PAUSED },
        ),
      );
      return true;
    }
  } as Socket['emit'];
}
