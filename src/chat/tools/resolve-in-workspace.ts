import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';

/** The folder of unstuck's own state (config, sessions): never the model's to write. */
export const STATE_DIRECTORY = '.unstuck';

/**
 * The absolute path of `requested` if it lies inside `root`, else an Error the model can read.
 * Symbolic links are followed for the part of the path that exists, so a link pointing out of
 * the working directory cannot be used to read or write outside it.
 */
export async function resolveInWorkspace(root: string, requested: unknown): Promise<string> {
  return (await locate(root, requested)).absolute;
}

/**
 * Like `resolveInWorkspace`, but the path with every symbolic link of its existing part resolved:
 * the file a read or a write really reaches, and one name per file for the file ledger.
 */
export async function resolveRealInWorkspace(root: string, requested: unknown): Promise<string> {
  return (await locate(root, requested)).real;
}

/**
 * The real path a write tool may write for `requested`: inside the working directory and not in
 * unstuck's own `.unstuck/` (a model that writes `.unstuck/config.json` could redirect the user's
 * key or rewrite its own instructions), whatever link or spelling leads there.
 */
export async function resolveWritableInWorkspace(
  root: string,
  requested: unknown,
  userConfig?: string,
): Promise<string> {
  const { realRoot, real } = await locate(root, requested);
  const first = relative(realRoot, real).split(sep)[0] ?? '';
  // Lower-cased: on a case-insensitive file system `.UNSTUCK/` is the same folder.
  if (first.toLowerCase() === STATE_DIRECTORY) {
    throw new Error(
      `${String(requested)} is in ${STATE_DIRECTORY}/, unstuck's own configuration and sessions; the model's tools may not write there (the user edits it by hand)`,
    );
  }
  // The user's own config and trusted-projects.json are inside the workspace when the chat runs in
  // the home folder (or XDG_CONFIG_HOME points into the project): writing them redirects the key
  // for every later chat, trusted whole.
  if (userConfig !== undefined) {
    const realConfig = await realpathOfExistingPart(resolve(userConfig));
    if (isInside(realConfig.toLowerCase(), real.toLowerCase())) {
      throw new Error(
        `${String(requested)} is in unstuck's user configuration (${relative(realRoot, realConfig) || '.'}); the model's tools may not write there (the user edits it by hand)`,
      );
    }
  }
  return real;
}

async function locate(root: string, requested: unknown): Promise<{ realRoot: string; absolute: string; real: string }> {
  if (typeof requested !== 'string' || requested.trim() === '') throw new Error('path must be a non-empty string');
  const realRoot = await realpath(root);
  const absolute = resolve(realRoot, requested);
  if (!isInside(realRoot, absolute)) throw new Error(`${requested} is outside the working directory`);
  const real = await realpathOfExistingPart(absolute);
  if (!isInside(realRoot, real))
    throw new Error(`${requested} leads outside the working directory (through a symbolic link)`);
  return { realRoot, absolute, real };
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

async function realpathOfExistingPart(path: string): Promise<string> {
  let current = path;
  const rest: string[] = [];
  for (;;) {
    try {
      const real = await realpath(current);
      return rest.length === 0 ? real : resolve(real, ...rest.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) return path;
      rest.push(current.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
      current = parent;
    }
  }
}
