import { createInterface } from 'node:readline';
import type { AskLine } from './create-asking-confirm.js';

/**
 * Asking for one-shot mode started from a terminal: each question gets its own short-lived
 * readline on stdin and is written to stderr, so stdout keeps only the answer. Ctrl-C, the end of
 * input or an aborted turn answer ''.
 */
export function createTerminalAsk(input: NodeJS.ReadableStream, output: { write(text: string): unknown }): AskLine {
  return (text, signal) =>
    new Promise<string>((resolve) => {
      const rl = createInterface({ input, output: output as NodeJS.WritableStream, terminal: true });
      let settled = false;
      const finish = (answer: string): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        rl.close();
        resolve(answer);
      };
      const onAbort = (): void => {
        output.write('\n');
        finish('');
      };
      signal.addEventListener('abort', onAbort, { once: true });
      rl.on('SIGINT', onAbort);
      rl.on('close', () => finish(''));
      rl.question(text, finish);
    });
}
