import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';

/**
 * The object under `key` in a small JSON file of the user's config directory (the trusted projects,
 * the sessions this user's chats started); `{}` when the file is missing, damaged or not that shape:
 * such a file grants nothing, and the next write replaces it with a good one.
 */
export async function readJsonRecord<T>(file: string | undefined, key: string): Promise<Record<string, T>> {
  if (file === undefined) return {};
  try {
    const value = (JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown> | null)?.[key];
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, T>) : {};
  } catch {
    return {};
  }
}

/** Writes `{ version: 1, [key]: record }` to `file` as a private (0600) file in a private (0700) directory, replacing it by a rename. */
export async function writeJsonRecord(
  directory: string,
  file: string,
  key: string,
  record: Record<string, unknown>,
): Promise<void> {
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify({ version: 1, [key]: record }, null, 2)}\n`, {
      flag: 'wx',
      mode: 0o600,
    });
    await chmod(temporary, 0o600);
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
}
