import { spawn } from 'node:child_process';
import type { Tool } from '../../agent/index.js';
import { commandEnvironment } from './command-environment.js';
import type { Confirm } from './confirm.js';
import { declined } from './confirm.js';
import { limitText } from './limit-text.js';
import { optionalInteger, requiredString, toolArguments } from './tool-arguments.js';

const DEFAULT_TIMEOUT_MS = 120_000;
const MAX_TIMEOUT_MS = 600_000;
/** Output kept in memory while the command runs; the model sees at most `limitText` of it. */
const MAX_CAPTURE = 1024 * 1024;

export function createRunCommandTool(root: string, confirm: Confirm, env: Record<string, string | undefined>): Tool {
  return {
    name: 'run_command',
    description:
      'Run a shell command (sh -c) in the working directory and return its exit code and output. It gets a reduced environment (PATH, HOME, locale, terminal; no tokens or keys). Asks the user first.',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The shell command line' },
        timeout_ms: {
          type: 'integer',
          description: `Time limit in milliseconds (default ${DEFAULT_TIMEOUT_MS}, at most ${MAX_TIMEOUT_MS})`,
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
    async run(args, { signal }) {
      const input = toolArguments(args);
      const command = requiredString(input, 'command');
      const timeout = Math.min(optionalInteger(input, 'timeout_ms') ?? DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
      if (!(await confirm({ tool: 'run_command', action: `run: ${command}` }, signal))) throw declined('run_command');
      signal.throwIfAborted();
      // An allow-list, secrets by name removed: the output goes to the model and the transcript.
      const childEnv = commandEnvironment(env);
      return await new Promise<string>((resolve, reject) => {
        // Its own process group, so stopping it stops whatever it started too.
        const child = spawn('sh', ['-c', command], {
          cwd: root,
          env: childEnv,
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        let dropped = 0;
        let stopReason: 'aborted' | 'timeout' | undefined;
        const collect = (chunk: Buffer): void => {
          output += chunk.toString('utf8');
          if (output.length > MAX_CAPTURE) {
            dropped += output.length - MAX_CAPTURE;
            output = output.slice(output.length - MAX_CAPTURE);
          }
        };
        child.stdout.on('data', collect);
        child.stderr.on('data', collect);
        const stop = (reason: 'aborted' | 'timeout'): void => {
          stopReason = reason;
          killGroup(child.pid, 'SIGTERM');
          setTimeout(() => killGroup(child.pid, 'SIGKILL'), 2000).unref();
        };
        const onAbort = (): void => stop('aborted');
        signal.addEventListener('abort', onAbort, { once: true });
        const timer = setTimeout(() => stop('timeout'), timeout);
        child.on('error', (error) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          reject(new Error(`could not start the command: ${error.message}`));
        });
        child.on('close', (code, killedBy) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          if (stopReason === 'aborted') {
            reject(new Error('the command was stopped: the turn was aborted'));
            return;
          }
          const status =
            stopReason === 'timeout'
              ? `timed out after ${timeout} ms`
              : code === null
                ? `killed by ${killedBy ?? 'a signal'}`
                : `exit code ${code}`;
          const lost = dropped > 0 ? `[... ${dropped} earlier characters left out ...]\n` : '';
          resolve(limitText(`${status}\n${lost}${output}`));
        });
      });
    },
  };
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}
