import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';

const root = join(import.meta.dirname, '../../..');

export interface ProxyProcess {
  url: string;
  child: ChildProcess;
  /** Everything it wrote to stderr so far (its log lines). */
  stderr(): string;
  /** Whether it has exited, and how. */
  exited(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Sends the signal (default SIGTERM) and resolves when it has exited. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; stderr: string }>;
}

/** Starts `unstuck proxy` as a real process (from the sources, through tsx); resolves once it says it is listening. */
export async function startProxyProcess(upstream: string, extra: readonly string[] = []): Promise<ProxyProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'proxy', '--upstream', upstream, '--port', '0', ...extra],
    { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = once(child, 'exit');
  child.once('exit', (code, signal) => (exit = { code, signal }));
  child.stderr?.setEncoding('utf8');
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr?.on('data', (chunk: string) => {
      stderr += chunk;
      const line = stderr.split('\n').find((text) => text.includes('"listening"'));
      if (line !== undefined) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.once('exit', (code) => reject(new Error(`proxy exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    child,
    stderr: () => stderr,
    exited: () => exit,
    async stop(signal = 'SIGTERM') {
      if (exit === undefined) {
        child.kill(signal);
        await exited;
      }
      return { code: exit?.code ?? null, stderr };
    },
  };
}
