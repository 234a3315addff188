import { createInterface } from 'node:readline';
import type { TerminalStyle } from './terminal-style.js';
import type { Confirm } from './tools/confirm.js';

/**
 * Confirmation for one-shot mode started from a terminal: each question gets its own short-lived
 * readline on stdin, written to stderr so stdout keeps only the answer. Questions are asked one at
 * a time; Ctrl-C or end of input declines.
 */
export function createTerminalConfirm(input: NodeJS.ReadableStream, output: { write(text: string): unknown }, style: TerminalStyle, around: { hold(): void; release(): void }): Confirm {
  let queue: Promise<unknown> = Promise.resolve();
  let always = false;
  const ask: Confirm = (request, signal) =>
    new Promise<boolean>((resolve) => {
      if (always) {
        resolve(true);
        return;
      }
      if (signal.aborted) {
        resolve(false);
        return;
      }
      around.hold();
      const rl = createInterface({ input, output: output as NodeJS.WritableStream, terminal: true });
      let settled = false;
      const finish = (word: string): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        rl.close();
        if (word === 'a' || word === 'always') always = true;
        resolve(word === 'y' || word === 'yes' || always);
        around.release();
      };
      const onAbort = (): void => {
        output.write('\n');
        finish('');
      };
      signal.addEventListener('abort', onAbort, { once: true });
      rl.on('SIGINT', onAbort);
      rl.on('close', () => finish(''));
      rl.question(style.yellow(`Allow ${request.tool}: ${request.action}? [y]es / [n]o / [a]lways `), (answer) => finish(answer.trim().toLowerCase()));
    });
  return (request, signal) => {
    const asked = queue.then(() => new Promise((resolve) => setImmediate(resolve))).then(() => ask(request, signal));
    queue = asked.catch(() => undefined);
    return asked;
  };
}
