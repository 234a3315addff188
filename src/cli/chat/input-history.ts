import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensurePrivateDirectory } from './private-directory.js';

/** The interactive prompt's history, kept across runs, relative to the working directory. */
export const HISTORY_FILE = join('.unstuck', 'history');
const KEEP = 500;

/** Newest first, the order node:readline wants for its `history` option. */
export async function loadInputHistory(cwd: string): Promise<string[]> {
  try {
    const lines = (await readFile(join(cwd, HISTORY_FILE), 'utf8')).split('\n').filter((line) => line !== '');
    if (lines.length > KEEP * 2) await writeFile(join(cwd, HISTORY_FILE), `${lines.slice(-KEEP).join('\n')}\n`, { mode: 0o600 });
    return lines.slice(-KEEP).reverse();
  } catch {
    return [];
  }
}

export async function appendInputHistory(cwd: string, line: string): Promise<void> {
  if (line.trim() === '' || line.includes('\n')) return;
  const file = join(cwd, HISTORY_FILE);
  try {
    await ensurePrivateDirectory(cwd);
    await appendFile(file, `${line}\n`, { mode: 0o600 });
  } catch {
    // History is a convenience: failing to keep it must not disturb the chat.
  }
}
