import { spawn } from 'node:child_process';

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
