import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';

/**
 * Takes `names` out of this process's environment, including the block the kernel shows as
 * `/proc/<pid>/environ`, which keeps the environment the process was started with whatever
 * `process.env` says later: a command the model runs could otherwise `cat /proc/$PPID/environ`
 * and read the provider key. On Linux the bytes of each `NAME=value` in that block are overwritten
 * with NULs through `/proc/self/mem` (its address is in `/proc/self/stat`, fields 50 and 51); the
 * variable is unset first, so nothing in the process still points at it. Elsewhere only
 * `process.env` is cleared (macOS and Windows show another process's environment to the same
 * user by other means; see docs/decisions/chat-command-environment.md). `keep`: names whose bytes
 * leave the block too but whose values stay in `env` (the chat still needs them; a command must
 * not read them past its allow-list). Returns the names whose bytes were erased from the initial block.
 */
export function eraseInitialEnvironment(
  names: readonly string[],
  env: Record<string, string | undefined> = process.env,
  keep: readonly string[] = [],
): string[] {
  for (const name of names) delete env[name];
  // Unset and set again: the value now lives in a copy of its own, and the block's bytes can go.
  for (const name of keep) {
    const value = env[name];
    if (value === undefined) continue;
    delete env[name];
    env[name] = value;
  }
  const erasing = [...names, ...keep];
  if (process.platform !== 'linux' || erasing.length === 0) return [];
  let fd: number | undefined;
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name in parentheses start at field 3; env_start/env_end are 50/51.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = Number(fields[47]);
    const end = Number(fields[48]);
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start || end - start > 16 * 1024 * 1024)
      return [];
    fd = openSync('/proc/self/mem', 'r+');
    const block = Buffer.alloc(end - start);
    readSync(fd, block, 0, block.length, start);
    const erased: string[] = [];
    let at = 0;
    while (at < block.length) {
      let stop = block.indexOf(0, at);
      if (stop === -1) stop = block.length;
      const equals = block.indexOf(0x3d, at);
      if (equals !== -1 && equals < stop) {
        const name = block.toString('utf8', at, equals);
        if (erasing.includes(name)) {
          writeSync(fd, Buffer.alloc(stop - at), 0, stop - at, start + at);
          erased.push(name);
        }
      }
      at = stop + 1;
    }
    return erased;
  } catch {
    // No /proc, or writing our own memory is not allowed here (a hardened kernel): process.env is still cleared.
    return [];
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
