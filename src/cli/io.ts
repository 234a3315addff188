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
