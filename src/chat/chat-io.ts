/**
 * What a chat touches of the outside world: the terminal, the environment it was started in and
 * its working directory. The CLI builds it from `process` (`src/cli/io.ts`), which keeps argv,
 * env and the standard streams in the composition root; tests pass their own.
 */
export interface ChatIo {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  cwd: string;
  /** Resolves when the process is asked to stop: a running turn is cancelled and saved. */
  signal?: AbortSignal;
}
