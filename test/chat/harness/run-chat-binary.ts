import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The real CLI entry point and the TypeScript loader, as absolute paths: the chat runs in a temp dir. */
export const MAIN = fileURLToPath(new URL('../../../src/cli/main.ts', import.meta.url));
export const TSX = import.meta.resolve('tsx');
export const NODE_ARGS = ['--import', TSX, MAIN];

/**
 * A user config directory of the test run's own, so no test reads or writes the real
 * `~/.config/unstuck` (its config or its trusted projects).
 */
export const TEST_CONFIG_HOME = join(tmpdir(), `unstuck-chat-test-config-${process.pid}`);

/** An environment with nothing of the caller's keys, colours or user config in it. */
export function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    LANG: 'C.UTF-8',
    XDG_CONFIG_HOME: TEST_CONFIG_HOME,
  };
  return { ...env, ...extra };
}

/** Runs `unstuck ARGS` as a child process; resolves with its exit code and output. */
export async function runChatBinary(
  args: string[],
  options: { cwd: string; env: Record<string, string>; stdin?: string; timeoutMs?: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...NODE_ARGS, ...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `unstuck ${args.join(' ')} did not finish in ${options.timeoutMs ?? 30_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      );
    }, options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.stdin ?? '');
  });
}
