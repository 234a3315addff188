import { readdir, readFile, readlink, realpath } from 'node:fs/promises';
import { UnstuckError } from '../../core/errors.js';

/**
 * Refuses to replace a file another process holds open for writing (an agent still running on its session would
 * append to the replaced file's old inode, or overwrite the repair). Linux only: reads /proc/<pid>/fd and the
 * fd's access mode in /proc/<pid>/fdinfo/<fd>; where /proc is not there, nothing is found.
 */
export async function refuseIfOpenForWriting(file: string): Promise<void> {
  const writer = await findWriter(file);
  if (writer === undefined) return;
  throw new UnstuckError(
    'IO',
    `is open for writing by process ${writer.pid} (${writer.name}): not replaced, nothing written; end that session first, then run fix --write again`,
    { file },
  );
}

/** Refuses when FILE's bytes are no longer the ones read (the agent appended to it meanwhile). */
export async function refuseIfChanged(file: string, bytes: Uint8Array): Promise<void> {
  const now = await readFile(file);
  if (Buffer.compare(now, bytes) === 0) return;
  throw new UnstuckError(
    'IO',
    'changed since it was read (another program wrote to it): not replaced, nothing written; run fix --write again',
    { file },
  );
}

async function findWriter(file: string): Promise<{ pid: number; name: string } | undefined> {
  let target: string;
  let pids: string[];
  try {
    target = await realpath(file);
    pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = await readdir(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if ((await readlink(`/proc/${pid}/fd/${fd}`)) !== target) continue;
        const info = await readFile(`/proc/${pid}/fdinfo/${fd}`, 'utf8');
        const flags = Number.parseInt(/^flags:\s*([0-7]+)/m.exec(info)?.[1] ?? '0', 8);
        // O_WRONLY = 1, O_RDWR = 2 (the access mode is the low two bits).
        if ((flags & 3) === 0) continue;
        const name = (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '?')).trim();
        return { pid: Number(pid), name };
      } catch {}
    }
  }
  return undefined;
}
