import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';

/**
 * The absolute path of `requested` if it lies inside `root`, else an Error the model can read.
 * Symbolic links are followed for the part of the path that exists, so a link pointing out of
 * the working directory cannot be used to read or write outside it.
 */
export async function resolveInWorkspace(root: string, requested: unknown): Promise<string> {
  if (typeof requested !== 'string' || requested.trim() === '') throw new Error('path must be a non-empty string');
  const realRoot = await realpath(root);
  const absolute = resolve(realRoot, requested);
  if (!isInside(realRoot, absolute)) throw new Error(`${requested} is outside the working directory`);
  const real = await realpathOfExistingPart(absolute);
  if (!isInside(realRoot, real)) throw new Error(`${requested} leads outside the working directory (through a symbolic link)`);
  return absolute;
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
