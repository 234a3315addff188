import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A PostgreSQL server of its own for a test file: `initdb` and `pg_ctl` (Debian's `postgresql`
 * package) in a temporary directory, on a free loopback port, with password login for one user.
 * PostgreSQL refuses to run as root, so as root it runs as the `postgres` user (via runuser).
 */
export interface PostgresServer {
  readonly url: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  /** A connection string for another user, password or database on this server. */
  urlFor(parts: { user?: string; password?: string; database?: string }): string;
  stop(): Promise<void>;
}

/** The directory with initdb and pg_ctl, or undefined when PostgreSQL is not installed. */
export function findPostgresBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    for (const version of versions) {
      const bin = join(root, version, 'bin');
      if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin;
    }
  }
  for (const directory of (process.env['PATH'] ?? '').split(':')) {
    if (directory !== '' && existsSync(join(directory, 'initdb')) && existsSync(join(directory, 'pg_ctl')))
      return directory;
  }
  return undefined;
}

/** Why the PostgreSQL tests cannot run here (one note), or undefined when they can. */
export function postgresSkipReason(): string | undefined {
  if (findPostgresBinaries() !== undefined) return undefined;
  if (process.env['CI'] !== undefined)
    throw new Error('PostgreSQL binaries (initdb, pg_ctl) are missing in CI: .ci/run installs the postgresql package');
  return 'PostgreSQL is not installed (initdb/pg_ctl not found): apt-get install postgresql to run these tests';
}

export async function startPostgres(): Promise<PostgresServer> {
  const bin = findPostgresBinaries();
  if (bin === undefined) throw new Error('initdb and pg_ctl not found');
  const directory = await mkdtemp(join(tmpdir(), 'unstuck-pg-'));
  const data = join(directory, 'data');
  const asRoot = userInfo().uid === 0;
  const user = 'unstuck';
  const password = 'test-password-not-secret';
  const port = await freePort();
  await writeFile(join(directory, 'password'), `${password}\n`);
  if (asRoot) {
    await chown(directory, ...(await postgresIds()));
    await chown(join(directory, 'password'), ...(await postgresIds()));
  }
  await chmod(directory, 0o700);
  const as = (command: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', join(bin, command), ...args], { cwd: directory })
      : run(join(bin, command), args, { cwd: directory });
  try {
    await as('initdb', [
      '-D',
      data,
      '-U',
      user,
      `--pwfile=${join(directory, 'password')}`,
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]);
    const settings = [
      '-p',
      String(port),
      '-k',
      directory,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=100',
      '-c',
      'shared_buffers=32MB',
    ];
    await as('pg_ctl', ['-D', data, '-o', settings.join(' '), '-l', join(directory, 'log'), '-w', '-t', '60', 'start']);
  } catch (error) {
    const log = await readFile(join(directory, 'log'), 'utf8').catch(() => '');
    await rm(directory, { recursive: true, force: true });
    throw new Error(`cannot start PostgreSQL: ${(error as Error).message}\n${log.slice(-2000)}`);
  }
  // A test process that dies without its after() hook must not leave a server running: on exit
  // (which cannot wait for pg_ctl), the postmaster gets SIGQUIT, PostgreSQL's immediate shutdown.
  const postmaster = Number((await readFile(join(data, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
  const onExit = () => {
    if (Number.isInteger(postmaster) && postmaster > 0) {
      try {
        process.kill(postmaster, 'SIGQUIT');
      } catch {
        // already gone
      }
    }
  };
  process.once('exit', onExit);
  const urlFor = (parts: { user?: string; password?: string; database?: string }) =>
    `postgres://${encodeURIComponent(parts.user ?? user)}:${encodeURIComponent(parts.password ?? password)}@127.0.0.1:${port}/${parts.database ?? 'postgres'}`;
  return {
    url: urlFor({}),
    port,
    user,
    password,
    urlFor,
    stop: async () => {
      process.removeListener('exit', onExit);
      await as('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      await rm(directory, { recursive: true, force: true });
    },
  };
}

async function postgresIds(): Promise<[number, number]> {
  const { stdout: uid } = await run('id', ['-u', 'postgres']);
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  return [Number(uid.trim()), Number(gid.trim())];
}

/** A loopback port nobody listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
