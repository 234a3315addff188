import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export function hasTmux(): boolean {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface TmuxTerminal {
  /** Types text literally (no key names), then Enter unless `enter: false`. */
  type(text: string, options?: { enter?: boolean }): Promise<void>;
  /** Sends tmux key names: `C-c`, `Up`, `Enter`. */
  keys(...names: string[]): Promise<void>;
  /** What the pane shows, with the scrollback, trailing blanks trimmed; `escapes` keeps the colour codes. */
  screen(options?: { escapes?: boolean }): Promise<string>;
  /** Polls the screen until `pattern` matches, at most `timeoutMs`; returns the screen. */
  waitFor(pattern: RegExp, options?: { timeoutMs?: number; after?: number }): Promise<string>;
  /** Resizes the window, as a user dragging the terminal's corner (the pane's programs get SIGWINCH). */
  resize(width: number, height: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A real pseudo-terminal: a private tmux server (its own socket, no config file) running one
 * command in a detached session. The command line is run by `sh -c`; when it ends, the pane
 * prints `[exited N]` and stays, so a test can read the exit code from the screen.
 */
export async function openTmuxTerminal(options: {
  command: string;
  cwd: string;
  env: Record<string, string>;
  width?: number;
  height?: number;
}): Promise<TmuxTerminal> {
  const socket = `unstuck-chat-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  const tmux = async (...args: string[]): Promise<string> =>
    (await exec('tmux', ['-L', socket, '-f', '/dev/null', ...args], { env: { ...options.env, TMUX: '' } })).stdout;
  const environment = Object.entries(options.env)
    .map(([name, value]) => `${name}=${shellQuote(value)}`)
    .join(' ');
  const line = `env -i ${environment} sh -c ${shellQuote(`${options.command}; echo "[exited $?]"; sleep 3600`)}`;
  await tmux(
    'new-session',
    '-d',
    '-s',
    'chat',
    '-x',
    String(options.width ?? 120),
    '-y',
    String(options.height ?? 40),
    '-c',
    options.cwd,
    line,
  );
  await tmux('set-option', '-t', 'chat', 'history-limit', '10000');
  const screen = async (screenOptions: { escapes?: boolean } = {}): Promise<string> =>
    (
      await tmux('capture-pane', '-p', '-J', ...(screenOptions.escapes === true ? ['-e'] : []), '-S', '-', '-t', 'chat')
    ).replace(/\s+$/, '');
  return {
    async type(text, typeOptions = {}) {
      await tmux('send-keys', '-t', 'chat', '-l', text);
      if (typeOptions.enter !== false) await tmux('send-keys', '-t', 'chat', 'Enter');
    },
    async keys(...names) {
      await tmux('send-keys', '-t', 'chat', ...names);
    },
    screen,
    async waitFor(pattern, waitOptions = {}) {
      const deadline = Date.now() + (waitOptions.timeoutMs ?? 10_000);
      let last = '';
      for (;;) {
        last = await screen();
        if (pattern.test(last.slice(waitOptions.after ?? 0))) return last;
        if (Date.now() > deadline) throw new Error(`the terminal never showed ${pattern}; it shows:\n${last}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async resize(width, height) {
      await tmux('resize-window', '-t', 'chat', '-x', String(width), '-y', String(height));
    },
    async close() {
      await tmux('kill-server').catch(() => undefined);
    },
  };
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
