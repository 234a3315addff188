/**
 * Claude Code interactive, on a real terminal (tmux), through `unstuck run -- claude`: the agent
 * draws its UI on the terminal it shares with us, answers a prompt through the proxy (the strict
 * emulator as the provider), redraws at the new width when the window is resized (SIGWINCH from the
 * terminal), shows "press Ctrl-C again to exit" on one Ctrl-C and exits on the second; the exit code
 * the shell sees is Claude Code's own (the same run without unstuck gives the same), and afterwards
 * no process of the run is left and the proxy's port is closed.
 *
 * Claude Code reads the terminal in raw mode (ISIG off), so a Ctrl-C typed there reaches it as a key
 * on the stdin it inherits, not as a SIGINT: no signal is sent to anyone, and whether `unstuck run`
 * would pass a SIGINT on a second time does not show here (checked: with SIGINT passed on, this still
 * passes). That path, an agent in cooked mode getting SIGINT from the terminal exactly once, is
 * test/cli/run-agent-interactive.test.ts's.
 *
 * Claude Code's first-run dialogs (theme, login, the custom API key, the folder trust) are answered
 * in the temporary HOME's ~/.claude.json before it starts, as a user who ran it before has them.
 * `node --import tsx e2e/agents/claude-interactive.ts` runs this alone (inside `unshare -n` when
 * it can, as run.ts does); run.ts runs it as step 6 of Claude Code's.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EmulatedRequest } from '../../src/emulator/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import type { TmuxTerminal } from '../../test/chat/harness/tmux-terminal.js';
import { hasTmux, openTmuxTerminal } from '../../test/chat/harness/tmux-terminal.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const claude = join(here, 'node_modules', '.bin', 'claude');
const unstuckCli = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const KEY = 'sk-ant-e2e-interactive-dummy-key-0123456789';
const ANSWER = 'Hello from the strict emulator.';

export async function runClaudeInteractive(options: { log: (line: string) => void }): Promise<string[]> {
  const { log } = options;
  const failures: string[] = [];
  const expect = (ok: boolean, what: string): void => {
    log(`${ok ? 'ok' : 'FAILED'}: ${what}`);
    if (!ok) failures.push(what);
  };
  log('claude 6. interactive on a terminal (tmux) through `unstuck run -- claude`: a prompt, a resize, Ctrl-C twice');
  if (!hasTmux()) {
    log('   skipped: tmux is not installed (apt-get install tmux)');
    return failures;
  }
  const root = await mkdtemp(join(tmpdir(), 'unstuck-e2e-claude-tty-'));
  const seen: EmulatedRequest[] = [];
  const emulator = createEmulator({ wires: ['anthropic'], onRequest: (request) => seen.push(request) });
  const server = await emulator.listen({ host: '127.0.0.1' });
  try {
    const home = join(root, 'home');
    const work = join(root, 'work');
    await mkdir(join(home, '.claude'), { recursive: true });
    await mkdir(work);
    await writeFile(join(home, '.claude.json'), JSON.stringify(firstRunAnswered(work)));
    const env = {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: home,
      LANG: 'C.UTF-8',
      TERM: 'xterm-256color',
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: KEY,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_BUG_COMMAND: '1',
    };
    const quote = (part: string) => `'${part.replaceAll("'", `'\\''`)}'`;
    // `set -m`: the command is a job of its own in the terminal's foreground, as in a user's shell.
    const direct = `set -m; ${quote(claude)}`;
    const wrapped = `set -m; ${[process.execPath, '--import', import.meta.resolve('tsx'), unstuckCli, 'run', '--', claude].map(quote).join(' ')}`;

    log('   a. claude alone, to know its own exit code on a double Ctrl-C');
    const alone = await session(direct, { cwd: work, env, log, prompt: false });
    log(`      exit ${alone.code}`);

    log('   b. unstuck run -- claude');
    emulator.push({ text: ANSWER });
    const before = seen.length;
    const through = await session(wrapped, { cwd: work, env, log, prompt: true });
    const requests = seen.slice(before);
    log(
      `      exit ${through.code}; the emulator saw ${requests.map((request) => `${request.path} ${request.status}`).join(', ') || 'nothing'}`,
    );
    expect(through.answered, 'Claude Code showed the answer it got through the proxy');
    expect(
      requests.length > 0 && requests.every((request) => request.status === 200),
      'the emulator saw only valid requests',
    );
    expect(through.resized, 'after the resize Claude Code drew its prompt box at the new width');
    expect(through.once, 'one Ctrl-C (a key, in raw mode): Claude Code says to press it again');
    expect(through.code !== undefined && through.code === alone.code, "the exit code is Claude Code's own");
    expect(through.leftovers.length === 0, `no process of the run is left (${through.leftovers.join(', ') || 'none'})`);
    expect(through.portClosed, "the proxy's port is closed after the run");
    if (through.proxyOrigin !== undefined) log(`      the proxy was at ${through.proxyOrigin} (the token not shown)`);
  } finally {
    await server.close();
    await rm(root, { recursive: true, force: true });
  }
  return failures;
}

/** ~/.claude.json as after a first run: theme and onboarding done, the dummy key approved, the folder trusted. */
function firstRunAnswered(work: string): Record<string, unknown> {
  return {
    hasCompletedOnboarding: true,
    lastOnboardingVersion: '2.1.332',
    theme: 'dark',
    bypassPermissionsModeAccepted: false,
    // Claude Code keeps the last 20 characters of each key the user approved.
    customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] },
    projects: { [work]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true, allowedTools: [] } },
  };
}

interface Session {
  code: number | undefined;
  answered: boolean;
  resized: boolean;
  once: boolean;
  leftovers: string[];
  portClosed: boolean;
  proxyOrigin?: string;
}

async function session(
  command: string,
  options: { cwd: string; env: Record<string, string>; log: (line: string) => void; prompt: boolean },
): Promise<Session> {
  const terminal = await openTmuxTerminal({ command, cwd: options.cwd, env: options.env, width: 100, height: 30 });
  const result: Session = {
    code: undefined,
    answered: false,
    resized: false,
    once: false,
    leftovers: [],
    portClosed: false,
  };
  let proxyUrl: string | undefined;
  try {
    await waitOrSay(terminal, /❯|for shortcuts/, 60_000, options.log, 'the prompt');
    const home = options.env['HOME'] ?? '';
    // The agent's own environment says where it was pointed (the proxy's URL, with the run's token).
    if (options.prompt)
      proxyUrl = processesOf(home)
        .map((pid) => environ(pid)['ANTHROPIC_BASE_URL'] ?? '')
        .find((url) => /\/t\/[\w-]{32}$/.test(url));
    if (options.prompt) {
      await terminal.type('Say hello.', { enter: false });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await terminal.keys('Enter');
      result.answered = await waitOrSay(
        terminal,
        new RegExp(ANSWER.replaceAll('.', '\\.')),
        60_000,
        options.log,
        'the answer',
      );
      const wide = longestRule(await terminal.screen());
      await terminal.resize(80, 24);
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && !result.resized) {
        const rules = rulesOf(await terminal.screen());
        result.resized = rules.some((length) => length >= 70 && length <= 80) && wide > 80;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    await terminal.keys('C-c');
    result.once = await waitOrSay(terminal, /again to exit/i, 10_000, options.log, '"press Ctrl-C again to exit"');
    await terminal.keys('C-c');
    const screen = await waitOrSay(terminal, /\[exited \d+\]/, 20_000, options.log, 'the exit');
    const code = /\[exited (\d+)\]/.exec(await terminal.screen())?.[1];
    if (screen && code !== undefined) result.code = Number(code);
    // Left: the pane's own shell and its `sleep` (the harness keeps the pane open to show `[exited N]`).
    result.leftovers = processesOf(options.env['HOME'] ?? '')
      .map((pid) => cmdline(pid).join(' '))
      .filter((line) => line !== '' && !/^sleep 3600/.test(line) && !/\[exited \$\?\]/.test(line));
    if (proxyUrl !== undefined) {
      result.proxyOrigin = new URL(proxyUrl).host;
      try {
        await fetch(`${proxyUrl}/healthz`);
      } catch (error) {
        result.portClosed = (error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';
      }
    } else result.portClosed = !options.prompt;
  } finally {
    await terminal.close();
  }
  return result;
}

async function waitOrSay(
  terminal: TmuxTerminal,
  pattern: RegExp,
  timeoutMs: number,
  log: (line: string) => void,
  what: string,
): Promise<boolean> {
  try {
    await terminal.waitFor(pattern, { timeoutMs });
    return true;
  } catch {
    log(`      never saw ${what}; the screen:\n${(await terminal.screen()).split('\n').slice(-25).join('\n')}`);
    return false;
  }
}

/** The lengths of the horizontal rules (runs of ─) Claude Code draws around its prompt box. */
function rulesOf(screen: string): number[] {
  return [...screen.matchAll(/─{20,}/g)].map((match) => match[0].length);
}

function longestRule(screen: string): number {
  return Math.max(0, ...rulesOf(screen));
}

/** The processes whose HOME is this run's temporary one: the pane's shell, and whatever it started. */
function processesOf(home: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => pid !== process.pid && environ(pid)['HOME'] === home);
}

function cmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

function environ(pid: number): Record<string, string> {
  try {
    return Object.fromEntries(
      readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .filter(Boolean)
        .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    );
  } catch {
    return {};
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const inside = process.env['UNSTUCK_E2E_AGENTS_NETNS'] !== undefined;
  const probe = inside ? undefined : spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' });
  if (probe?.status === 0) {
    const child = spawnSync(
      'unshare',
      ['-n', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, ...process.execArgv, process.argv[1]],
      { stdio: 'inherit', env: { ...process.env, UNSTUCK_E2E_AGENTS_NETNS: 'netns' } },
    );
    process.exit(child.status ?? 1);
  }
  const failures = await runClaudeInteractive({ log: (line) => process.stdout.write(`${line}\n`) });
  process.stdout.write(failures.length === 0 ? 'every expectation held\n' : `${failures.length} failed\n`);
  process.exit(failures.length === 0 ? 0 : 1);
}
