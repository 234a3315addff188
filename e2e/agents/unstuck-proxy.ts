import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The real `unstuck proxy` process (the built `dist/cli/main.js`, as a user runs it) in front of
 * the emulator: `--upstream <emulator> --port 0`, its URL read from the `listening` line on
 * stderr. What it repaired is gathered from its JSON log lines (path, status, rules; never
 * contents) and said on close. Stopped with SIGTERM (its graceful drain), SIGKILL after 10 s.
 */
export const unstuckMain = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export async function startUnstuckProxy(
  upstream: string,
  log: (line: string) => void,
): Promise<{ url: string; label: string; close(): Promise<void> }> {
  if (!existsSync(unstuckMain)) throw new Error(`${unstuckMain} is missing: run \`npm run build\` at the root first`);
  const child = spawn(process.execPath, [unstuckMain, 'proxy', '--upstream', upstream, '--port', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
  });
  const rules = new Set<string>();
  let buffered = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('unstuck proxy did not say it was listening within 20 s')), 20_000);
    child.on('exit', (code) =>
      reject(new Error(`unstuck proxy exited (${code}) before listening: ${buffered.trim()}`)),
    );
    child.stderr.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
        let entry: { event?: string; url?: string; rules?: string[] } | undefined;
        try {
          entry = JSON.parse(line) as typeof entry;
        } catch {
          entry = undefined;
        }
        if (entry?.event === 'listening' && typeof entry.url === 'string') {
          clearTimeout(timer);
          resolve(entry.url);
        }
        for (const rule of entry?.rules ?? []) rules.add(rule);
      }
    });
  });
  log(`   unstuck proxy (${unstuckMain}) listening at ${url}, --upstream ${upstream}`);
  return {
    url,
    label: 'unstuck proxy',
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          log(
            `   unstuck proxy stopped (${signal ?? `exit ${code}`}); repaired: ${[...rules].join(', ') || 'nothing'}`,
          );
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
