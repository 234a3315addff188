import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { constants } from 'node:os';
import type { ProfileName } from '../../core/index.js';
import { getProfile, profileNames, UnstuckError } from '../../core/index.js';
import type { ProxyLogEntry, ServingProxy } from '../../http/index.js';
import type { AgentTarget } from '../agent-targets.js';
import { AGENT_NAMES, AGENT_TARGETS, detectAgent, planRun } from '../agent-targets.js';
import { createProcessTreeCheck } from '../child-connections.js';
import type { Command } from '../command.js';
import type { Io } from '../io.js';
import { createLogLines } from '../log-lines.js';
import type { RunRepairReport } from '../report/run-repair-report.js';
import { createRunRepairReport } from '../report/run-repair-report.js';
import { startProxy } from '../start-proxy.js';
import { guardProcess, parseUpstream } from './proxy.js';

/** Exit codes a shell gives a command it cannot run. */
const NOT_FOUND = 127;
const NOT_EXECUTABLE = 126;

/**
 * Signals from the terminal (Ctrl-C, Ctrl-\) reach the whole foreground process group, the agent
 * included, straight from the kernel: passing them on too would deliver each twice, and agents
 * read two quick Ctrl-C as "exit". So they are ignored here and passed on only when there is no
 * terminal (a script's `kill -INT`). Window size changes (SIGWINCH) reach the group the same way
 * and are not passed on at all; the agent reads the size from the terminal it shares with us.
 */
const TERMINAL_SIGNALS = ['SIGINT', 'SIGQUIT'] as const;
/** The agents whose saved sessions `unstuck scan` finds in their default homes (src/cli/sessions/agent-readers.ts). */
const SCANNED_AGENTS = new Set(['claude', 'codex', 'gemini']);
/** Signals sent to this process alone (`kill PID`, a closing session): passed on to the agent. */
const FORWARDED_SIGNALS = ['SIGTERM', 'SIGHUP', 'SIGUSR2'] as const;

export const runAgentCommand: Command = {
  name: 'run',
  summary: 'Run an agent with its requests repaired on the way: unstuck run -- claude --resume ID',
  positionals: '[--] COMMAND [ARGS...]',
  passesCommandLine: true,
  options: {
    agent: { type: 'string' },
    upstream: { type: 'string' },
    profile: { type: 'string' },
    quiet: { type: 'boolean', short: 'q' },
    log: { type: 'string' },
    report: { type: 'string' },
  },
  optionHelp: {
    agent: `Which agent COMMAND is, for the base-URL variables it reads: ${AGENT_NAMES.join(', ')} (default: from the command's name)`,
    upstream: 'Send the requests here instead of where the agent would (its base-URL variable, else the provider)',
    profile: `Provider rules for chat-completions requests: ${profileNames.join(', ')} (default openai)`,
    quiet: 'Say nothing after the run, even when requests were repaired',
    log: "Append the proxy's JSON line per request to this file (never keys or contents)",
    report:
      'Write a self-contained HTML page of every request repaired during the run (its history before and after) to this file',
  },
  async run({ values, positionals }, io) {
    const [command, ...args] = positionals;
    if (command === undefined || command === '')
      throw new UnstuckError('USAGE', 'missing the command to run, e.g. unstuck run -- claude --resume ID');
    const target = resolveAgent(values.agent, command);
    const profile = typeof values.profile === 'string' ? values.profile : undefined;
    if (profile !== undefined) getProfile(profile as ProfileName);
    const override = typeof values.upstream === 'string' ? parseUpstream(values.upstream, '--upstream') : undefined;
    const plan = planRun(target, io.env, io.cwd);
    const upstreams = plan.baseUrls.map((variable) => {
      if (override !== undefined) return override;
      return variable.previous === undefined
        ? new URL(variable.providerDefault)
        : parseUpstream(variable.previous, variable.name);
    });

    const summary = createRunSummary();
    const reportFile = typeof values.report === 'string' ? values.report : undefined;
    const report = reportFile === undefined ? undefined : createReportWriter(reportFile, profile as ProfileName);
    // Written once before the agent starts (a path that cannot be written is said now, not after
    // the session), again on a signal to us, and last after the agent exits.
    if (report !== undefined) await report.write();
    const logFile = typeof values.log === 'string' ? createWriteStream(values.log, { flags: 'a' }) : undefined;
    const logLines = logFile === undefined ? undefined : createLogLines(logFile);
    const log = (entry: ProxyLogEntry): void => {
      summary.add(entry);
      logLines?.line(entry);
    };
    // One proxy per upstream origin; the agent keeps the path of the URL it had (`/v1`, a gateway's
    // prefix), which the proxy appends to the origin unchanged.
    // Only the agent is given the proxy's URL, and with it this run's token: another process on the
    // machine that finds the port gets a 403 (docs/decisions/cli-run-agent.md).
    const token = randomBytes(24).toString('base64url');
    // An agent pointed only on its command line (Codex) is not given the token, which `ps` would
    // show every local user: its proxy admits the connections of its own processes instead.
    let agentPid: number | undefined;
    const byProcess = target.tokenInUrl === false ? createProcessTreeCheck(() => agentPid) : undefined;
    const servers = new Map<string, ServingProxy>();
    const removeGuard = guardProcess((entry) => logLines?.line(entry));
    try {
      const proxyUrls: string[] = [];
      for (const upstream of upstreams) {
        let server = servers.get(upstream.origin);
        if (server === undefined) {
          server = await startProxy({
            upstream: new URL(upstream.origin),
            ...(profile === undefined ? {} : { profile: profile as ProfileName }),
            host: '127.0.0.1',
            port: 0,
            ...(byProcess === undefined ? { pathToken: token } : { admitConnection: byProcess }),
            log,
            ...(report === undefined ? {} : { onRepair: report.collector.add }),
          });
          servers.set(upstream.origin, server);
        }
        const path = upstream.pathname === '/' ? '' : upstream.pathname;
        proxyUrls.push(byProcess === undefined ? `${server.url}/t/${token}${path}` : `${server.url}${path}`);
      }
      const env: Record<string, string | undefined> = { ...io.env, ...plan.environment(proxyUrls) };
      if (target.note !== undefined && values.quiet !== true) io.stderr.write(`${target.note}\n`);
      const code = await runChild(command, [...plan.arguments(proxyUrls), ...args], env, io, {
        started: (pid) => {
          agentPid = pid;
        },
        signalled: () => {
          report?.write().catch(() => undefined);
        },
      });
      if (report !== undefined) await report.write().catch((error: unknown) => reportFailed(error, io));
      const line = summary.line(values.log, reportFile, SCANNED_AGENTS.has(target.name));
      if (line !== undefined && values.quiet !== true) io.stderr.write(`${paint(line, io)}\n`);
      return code;
    } finally {
      await Promise.all([...servers.values()].map((server) => server.close()));
      removeGuard();
      logLines?.flush();
      if (logFile !== undefined) await new Promise<void>((resolve) => logFile.end(() => resolve()));
    }
  },
};

function resolveAgent(value: unknown, command: string): AgentTarget {
  if (value === undefined) return detectAgent(command);
  const target = typeof value === 'string' ? AGENT_TARGETS[value] : undefined;
  if (target === undefined)
    throw new UnstuckError('USAGE', `--agent must be one of ${AGENT_NAMES.join(', ')}, not '${String(value)}'`);
  return target;
}

/**
 * Runs the agent on our terminal (stdio inherited: TTY, colours and window size are its own) and
 * resolves with its exit code, or 128+n when a signal ended it, as a shell reports it.
 */
function runChild(
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  io: Io,
  hooks: { started(pid: number): void; signalled(): void },
): Promise<number> {
  const { signalled } = hooks;
  return new Promise((resolve) => {
    let child: ChildProcess;
    const listeners: [NodeJS.Signals, () => void][] = [];
    const done = (code: number): void => {
      for (const [signal, listener] of listeners) process.off(signal, listener);
      resolve(code);
    };
    try {
      child = spawn(command, args, { stdio: 'inherit', env, cwd: io.cwd });
      if (child.pid !== undefined) hooks.started(child.pid);
    } catch (error) {
      io.stderr.write(`unstuck run: cannot start '${command}': ${(error as Error).message}\n`);
      done(NOT_EXECUTABLE);
      return;
    }
    const pass = (signal: NodeJS.Signals): void => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    };
    for (const signal of TERMINAL_SIGNALS)
      listeners.push([
        signal,
        () => {
          signalled();
          if (io.stdin.isTTY !== true) pass(signal);
        },
      ]);
    for (const signal of FORWARDED_SIGNALS)
      listeners.push([
        signal,
        () => {
          signalled();
          pass(signal);
        },
      ]);
    for (const [signal, listener] of listeners) process.on(signal, listener);
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return; // started: its exit says how it ended
      const notFound = error.code === 'ENOENT';
      io.stderr.write(
        `unstuck run: cannot start '${command}': ${notFound ? 'command not found' : error.code === 'EACCES' ? 'permission denied' : error.message}\n`,
      );
      done(notFound ? NOT_FOUND : NOT_EXECUTABLE);
    });
    child.once('exit', (code, signal) => {
      done(signal === null ? (code ?? 1) : 128 + (constants.signals[signal] ?? 0));
    });
  });
}

/** What the proxy repaired during the run: requests repaired, and of which rules. */
function createRunSummary(): {
  add(entry: ProxyLogEntry): void;
  line(logPath: unknown, reportPath: string | undefined, scans: boolean): string | undefined;
} {
  let requests = 0;
  let repaired = 0;
  const rules = new Map<string, number>();
  return {
    add(entry) {
      if (entry.outcome === 'local') return;
      requests += 1;
      if (entry.rules.length === 0) return;
      repaired += 1;
      for (const rule of new Set(entry.rules)) rules.set(rule, (rules.get(rule) ?? 0) + 1);
    },
    line(logPath, reportPath, scans) {
      if (repaired === 0) return undefined;
      const kinds = [...rules].map(([rule, count]) => `${rule} ×${count}`).join(', ');
      const more = [
        reportPath === undefined ? 'to see what was changed, add --report FILE' : `what was changed: ${reportPath}`,
        // The history is repaired on the wire only: the saved session is still broken, and `unstuck scan` finds it.
        ...(scans ? ['the saved session: unstuck scan'] : []),
        ...(typeof logPath === 'string' ? [`each request in ${logPath}`] : []),
      ].join('; ');
      return `unstuck: repaired ${repaired} of ${requests} request${requests === 1 ? '' : 's'} (${kinds}); ${more}`;
    },
  };
}

/** The run's report and its writes, one at a time (a signal's write and the last one never interleave). */
function createReportWriter(
  file: string,
  profile: ProfileName | undefined,
): { collector: RunRepairReport; write(): Promise<void> } {
  const collector = createRunRepairReport({ profile });
  let last: Promise<void> = Promise.resolve();
  return {
    collector,
    write() {
      last = last.catch(() => undefined).then(() => collector.write(file));
      return last;
    },
  };
}

function reportFailed(error: unknown, io: Io): void {
  io.stderr.write(`unstuck run: ${error instanceof Error ? error.message : String(error)}\n`);
}

function paint(line: string, io: Io): string {
  const color = io.stderr.isTTY === true && (io.env['NO_COLOR'] ?? '') === '';
  return color ? `\u001b[33m${line}\u001b[39m` : line;
}
