import { Readable } from 'node:stream';
import type { Io } from '../../src/cli/io.js';

/** An Io whose output is captured, for running CLI commands in-process. */
export function captureIo(
  options: { cwd?: string; stdin?: string; env?: Record<string, string> } = {},
): Io & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text) },
    stdin: Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]) as Io['stdin'],
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
    out: () => out,
    err: () => err,
  };
}
