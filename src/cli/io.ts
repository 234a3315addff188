/**
 * Everything a command may touch of the outside world, passed in so tests can capture it.
 * Only `main.ts` builds the real one from `process`.
 */
export interface Io {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  cwd: string;
  /** Set by commands that run until stopped (proxy, emulate, chat): resolves when the process is asked to stop. */
  signal?: AbortSignal;
}

export function createProcessIo(): Io {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd() };
}

/**
 * Keeps a failing stdout from ending the process with a stack trace. A reader that went away
 * (`| head -1`, EPIPE) ends the output quietly: the command finishes, with its own exit code.
 * Any other failure (a full disk: ENOSPC) is one line on stderr and exit 2, the code for "could
 * not do it". `settle` waits for what is still being written, then gives the exit code.
 */
export function watchOutput(
  stdout: NodeJS.WritableStream,
  stderr: NodeJS.WritableStream,
): { settle(code: number): Promise<number> } {
  let failure: NodeJS.ErrnoException | undefined;
  stdout.on('error', (error: NodeJS.ErrnoException) => {
    failure ??= error;
  });
  // Nowhere is left to say anything when stderr fails.
  stderr.on('error', () => undefined);
  return {
    async settle(code) {
      await new Promise<void>((resolve) => stdout.write('', () => resolve()));
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (failure === undefined || failure.code === 'EPIPE') return code;
      stderr.write(
        `unstuck: cannot write the output: ${failure.code === 'ENOSPC' ? 'no space left on the device' : failure.message} (${failure.code ?? 'error'})\n`,
      );
      return 2;
    },
  };
}
