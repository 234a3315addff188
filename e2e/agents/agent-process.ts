import { spawn } from 'node:child_process';
import type { EmulatedRequest, Emulator, EmulatorOptions } from '../../src/emulator/index.js';
import { createEmulator } from '../../src/emulator/index.js';

export interface AgentProcess {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

/** Runs an agent binary to its end (killed after `timeoutMs`), stdin closed, both outputs kept. */
export function runAgent(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<AgentProcess> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 300_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, seconds: (performance.now() - started) / 1000 });
    });
  });
}

/** The JSONL lines of a session file, and a way to write them back with some changed, added or removed. */
export function jsonlLines(text: string): { lines: string[]; records: (Record<string, any> | undefined)[] } {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const records = lines.map((line) => {
    try {
      return JSON.parse(line) as Record<string, any>;
    } catch {
      return undefined;
    }
  });
  return { lines, records };
}

export function joinLines(lines: readonly string[]): string {
  return `${lines.join('\n')}\n`;
}

/** A run's expectations: each logged as `ok`/`FAILED` under the agent's name; the failed ones kept to report. */
export function expectations(
  agent: string,
  log: (line: string) => void,
): { failures: string[]; expect: (ok: boolean, what: string) => void } {
  const failures: string[] = [];
  const expect = (ok: boolean, what: string): void => {
    log(`${ok ? 'ok' : 'FAILED'}: ${agent}: ${what}`);
    if (!ok) failures.push(`${agent}: ${what}`);
  };
  return { failures, expect };
}

/**
 * The strict emulator on loopback for one agent's run: every request kept in `seen` and logged as path, status and
 * the first rule it broke at `where.index` (with the provider's text when `withMessage`); never contents.
 */
export async function startLoggedEmulator(
  options: Omit<EmulatorOptions, 'onRequest'>,
  where: string,
  log: (line: string) => void,
  withMessage = false,
): Promise<{ emulator: Emulator; server: Awaited<ReturnType<Emulator['listen']>>; seen: EmulatedRequest[] }> {
  const seen: EmulatedRequest[] = [];
  const emulator = createEmulator({
    ...options,
    onRequest: (request) => {
      seen.push(request);
      const first = request.violations[0];
      const broke =
        first === undefined ? '' : ` ${first.rule} ${where}.${first.index}${withMessage ? `: ${first.message}` : ''}`;
      log(`  emulator: ${request.path} ${request.status}${broke}`);
    },
  });
  const server = await emulator.listen({ host: '127.0.0.1' });
  return { emulator, server, seen };
}
