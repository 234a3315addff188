import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { PostgresServer } from '../support/postgres-server.js';
import { postgresSkipReason, startPostgres } from '../support/postgres-server.js';
import { temporaryDirectory } from './helpers.js';

/**
 * bundleChild for a child that uses the database drivers: they stay external (native code,
 * optional peers), so the bundle is written under node_modules/.cache, from where Node finds them
 * in this repository's node_modules. `dispose` removes it.
 */
export async function bundleDatabaseChild(name: string): Promise<{ path: string; dispose(): Promise<void> }> {
  const directory = fileURLToPath(
    new URL(`../../node_modules/.cache/unstuck-db-children/${process.pid}/`, import.meta.url),
  );
  await mkdir(directory, { recursive: true });
  const outfile = join(directory, name.replace(/\.ts$/, '.mjs'));
  await build({
    entryPoints: [fileURLToPath(new URL(`./${name}`, import.meta.url))],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'silent',
    external: ['better-sqlite3', 'pg'],
  });
  return { path: outfile, dispose: () => rm(directory, { recursive: true, force: true }) };
}

/**
 * What the crash and multi-node runs share: a bundled child, a temporary directory and (where the
 * binaries are there) a PostgreSQL server, made before the suite's tests and removed after them.
 */
export interface DatabaseRig {
  readonly skipPostgres: string | undefined;
  readonly child: { path: string };
  readonly directory: { path: string };
  readonly server: PostgresServer | undefined;
}

export function useDatabaseRig(childName: string): DatabaseRig {
  let child: Awaited<ReturnType<typeof bundleDatabaseChild>> | undefined;
  let directory: Awaited<ReturnType<typeof temporaryDirectory>> | undefined;
  let server: PostgresServer | undefined;
  const skipPostgres = postgresSkipReason();
  before(async () => {
    child = await bundleDatabaseChild(childName);
    directory = await temporaryDirectory();
    if (skipPostgres === undefined) server = await startPostgres();
  });
  after(async () => {
    await server?.stop();
    await directory?.dispose();
    await child?.dispose();
  });
  const made = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the database rig's ${what} is made in before()`);
    return value;
  };
  return {
    skipPostgres,
    get child() {
      return made(child, 'child');
    },
    get directory() {
      return made(directory, 'directory');
    },
    get server() {
      return server;
    },
  };
}
