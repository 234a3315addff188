import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/**
 * bundleChild for a child that uses the database drivers: they stay external (native code,
 * optional peers), so the bundle is written under node_modules/.cache, from where Node finds them
 * in this repository's node_modules. `dispose` removes it.
 */
export async function bundleDatabaseChild(name: string): Promise<{ path: string; dispose(): Promise<void> }> {
  const directory = fileURLToPath(new URL(`../../node_modules/.cache/unstuck-db-children/${process.pid}/`, import.meta.url));
  await mkdir(directory, { recursive: true });
  const outfile = join(directory, name.replace(/\.ts$/, '.mjs'));
  await build({
    entryPoints: [fileURLToPath(new URL(`./${name}`, import.meta.url))],
    bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile, logLevel: 'silent',
    external: ['better-sqlite3', 'pg'],
  });
  return { path: outfile, dispose: () => rm(directory, { recursive: true, force: true }) };
}
