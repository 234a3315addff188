import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import type { ProfileName } from '../../core/index.js';
import { getProfile, profileNames, UnstuckError } from '../../core/index.js';
import type { WireName } from '../../http/index.js';
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_UPSTREAM_TIMEOUT_MS,
  isWireName,
  WIRE_NAMES,
} from '../../http/index.js';
import type { Command } from '../command.js';
import { EXIT } from '../command.js';
import { createLogLines } from '../log-lines.js';
import { startProxy } from '../start-proxy.js';

/** How long in-flight requests may go on after SIGTERM/SIGINT before their connections are closed. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;

export const proxyCommand: Command = {
  name: 'proxy',
  summary: 'Run a proxy that repairs chat-completions and Anthropic Messages requests on their way to the provider',
  positionals: '',
  options: {
    upstream: { type: 'string', multiple: true },
    port: { type: 'string' },
    host: { type: 'string' },
    profile: { type: 'string' },
    'log-bodies': { type: 'boolean' },
    'max-body-bytes': { type: 'string' },
    'upstream-timeout-ms': { type: 'string' },
    'allow-host': { type: 'string', multiple: true },
    'request-timeout-ms': { type: 'string' },
    'headers-timeout-ms': { type: 'string' },
    'max-connections': { type: 'string' },
    'drain-timeout-ms': { type: 'string' },
    'token-file': { type: 'string' },
  },
  optionHelp: {
    upstream: `Base URL to forward to, e.g. https://api.anthropic.com (required); repeat as WIRE=URL to send one wire (${WIRE_NAMES.join(', ')}) to its own provider`,
    port: 'Port to listen on (default 8787; 0 picks a free one)',
    host: 'Address to bind (default 127.0.0.1; bind others only on a trusted network)',
    profile: `Provider rules to repair for: ${profileNames.join(', ')} (default openai)`,
    'log-bodies': 'Put request bodies in the log lines (message contents; keys are never logged)',
    'max-body-bytes': `Answer 413 to larger request bodies (default ${DEFAULT_MAX_BODY_BYTES})`,
    'upstream-timeout-ms': `Answer 504 / end the stream when the upstream is silent this long (default ${DEFAULT_UPSTREAM_TIMEOUT_MS})`,
    'allow-host':
      'Also serve requests whose Host is this name (repeatable; loopback names and the bound address always are)',
    'request-timeout-ms': `Close a connection whose request (headers and body) is not in within this (default ${DEFAULT_REQUEST_TIMEOUT_MS})`,
    'headers-timeout-ms': `Close a connection whose request headers are not in within this (default ${DEFAULT_HEADERS_TIMEOUT_MS})`,
    'max-connections': `Refuse connections beyond this many at once (default ${DEFAULT_MAX_CONNECTIONS})`,
    'drain-timeout-ms': `On SIGTERM/SIGINT, let requests in flight finish for this long before closing (default ${DEFAULT_DRAIN_TIMEOUT_MS})`,
    'token-file':
      'Serve only requests under /t/TOKEN/ (clients put it in their base URL), TOKEN read from this file (made, 0600, when missing); or set UNSTUCK_PROXY_TOKEN',
  },
  async run({ values }, io) {
    const { fallback, routes } = parseUpstreams(values.upstream);
    const port = parseInteger(values.port, '--port', 8787, 0, 65535);
    const maxBodyBytes = parseInteger(
      values['max-body-bytes'],
      '--max-body-bytes',
      DEFAULT_MAX_BODY_BYTES,
      1,
      Number.MAX_SAFE_INTEGER,
    );
    const upstreamTimeoutMs = parseInteger(
      values['upstream-timeout-ms'],
      '--upstream-timeout-ms',
      DEFAULT_UPSTREAM_TIMEOUT_MS,
      1,
      2_147_483_647,
    );
    const profile = typeof values.profile === 'string' ? values.profile : undefined;
    if (profile !== undefined) getProfile(profile as ProfileName); // an unknown name fails here, as one line
    const host = typeof values.host === 'string' ? values.host : '127.0.0.1';
    const requestTimeoutMs = parseInteger(
      values['request-timeout-ms'],
      '--request-timeout-ms',
      DEFAULT_REQUEST_TIMEOUT_MS,
      0,
      2_147_483_647,
    );
    const headersTimeoutMs = parseInteger(
      values['headers-timeout-ms'],
      '--headers-timeout-ms',
      DEFAULT_HEADERS_TIMEOUT_MS,
      1,
      2_147_483_647,
    );
    const maxConnections = parseInteger(
      values['max-connections'],
      '--max-connections',
      DEFAULT_MAX_CONNECTIONS,
      1,
      1_000_000,
    );
    const drainMs = parseInteger(
      values['drain-timeout-ms'],
      '--drain-timeout-ms',
      DEFAULT_DRAIN_TIMEOUT_MS,
      0,
      2_147_483_647,
    );
    const allowHosts = parseHosts(values['allow-host']);
    const token = readToken(values['token-file'], io.env['UNSTUCK_PROXY_TOKEN']);

    const logLines = createLogLines(io.stderr);
    const server = await startProxy({
      ...(fallback === undefined ? {} : { upstream: fallback }),
      routes,
      maxBodyBytes,
      upstreamTimeoutMs,
      logBodies: values['log-bodies'] === true,
      ...(profile === undefined ? {} : { profile: profile as ProfileName }),
      ...(token === undefined ? {} : { pathToken: token.token }),
      log: (entry) => logLines.line(entry),
      port,
      host,
      allowHosts,
      requestTimeoutMs,
      headersTimeoutMs,
      maxConnections,
    });
    const removeGuard = guardProcess((entry) => logLines.line(entry));
    try {
      io.stderr.write(
        `${JSON.stringify({
          event: 'listening',
          url: server.url,
          ...(fallback === undefined ? {} : { upstream: `${fallback.origin}${fallback.pathname}` }),
          ...(routes.size === 0
            ? {}
            : { routes: Object.fromEntries([...routes].map(([wire, url]) => [wire, `${url.origin}${url.pathname}`])) }),
          profile: profile ?? 'openai',
          // Never the token itself: where it is, and that clients need it in their base URL.
          ...(token === undefined ? {} : { token: token.from }),
        })}\n`,
      );
      await new Promise<void>((resolve) => {
        if (io.signal === undefined) return; // runs until the process is killed
        if (io.signal.aborted) resolve();
        io.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      // A graceful stop: no new connections, the requests in flight finish (up to the drain bound), then the rest are cut.
      logLines.line({ event: 'draining', inFlight: server.inFlight, drainMs });
      const { cut } = await server.shutdown({ drainMs });
      logLines.line({ event: 'stopped', cut });
    } finally {
      removeGuard();
      logLines.flush();
    }
    return EXIT.ok;
  },
};

/**
 * While the proxy serves, an error that escapes every carrier (a library's event handler throwing
 * on what an upstream or a client sent) is one log line, not the end of every client's exchange:
 * the carriers fail their own exchange for the errors they catch (http/node/relay.ts), this is the
 * last line behind them. Returns the function that removes the guard.
 */
export function guardProcess(log: (entry: { event: 'uncaught-error'; error: string }) => void): () => void {
  const onError = (error: unknown): void => {
    const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    log({ event: 'uncaught-error', error: text.split('\n')[0]?.slice(0, 300) ?? '' });
  };
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  return () => {
    process.off('uncaughtException', onError);
    process.off('unhandledRejection', onError);
  };
}

/** Longer is refused: a token file is one line. */
const MAX_TOKEN_FILE_BYTES = 4096;

/**
 * The proxy's token (`ProxyOptions.pathToken`): from `--token-file FILE`, or the environment, never
 * from the command line (every local user reads a command line in `ps`). A missing FILE is made
 * with a new token, readable by its owner alone; an existing one must be a regular file no one
 * else can read.
 */
function readToken(file: unknown, env: string | undefined): { token: string; from: string } | undefined {
  const fromEnv = env === undefined || env === '' ? undefined : env;
  if (typeof file === 'string' && fromEnv !== undefined)
    throw new UnstuckError('USAGE', 'give the token once: --token-file FILE or UNSTUCK_PROXY_TOKEN, not both');
  if (fromEnv !== undefined) return { token: checkToken(fromEnv.trim(), 'UNSTUCK_PROXY_TOKEN'), from: 'env' };
  if (typeof file !== 'string') return undefined;
  if (file === '') throw new UnstuckError('USAGE', '--token-file needs a file name');
  let fd: number;
  try {
    // O_NOFOLLOW: the file itself, never where a link put there points.
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new UnstuckError('USAGE', `${file}: the token file must be a regular file, not a link`);
    if (code !== 'ENOENT') throw new UnstuckError('USAGE', `${file}: cannot read the token file (${code})`);
    const token = randomBytes(24).toString('base64url');
    try {
      writeFileSync(file, `${token}\n`, { flag: 'wx', mode: 0o600 });
    } catch (made) {
      throw new UnstuckError('USAGE', `${file}: cannot make the token file (${(made as NodeJS.ErrnoException).code})`);
    }
    return { token, from: file };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new UnstuckError('USAGE', `${file}: the token file must be a regular file`);
    if ((stat.mode & 0o077) !== 0)
      throw new UnstuckError('USAGE', `${file}: the token file is readable by other users (chmod 600 ${file})`);
    if (stat.size > MAX_TOKEN_FILE_BYTES)
      throw new UnstuckError('USAGE', `${file}: the token file must hold one line, the token`);
    return { token: checkToken(readFileSync(fd, 'utf8').trim(), file), from: file };
  } finally {
    closeSync(fd);
  }
}

function checkToken(token: string, where: string): string {
  if (!/^[\w-]{16,256}$/.test(token))
    throw new UnstuckError('USAGE', `${where}: the token must be 16 to 256 letters, digits, '-' or '_'`);
  return token;
}

function parseHosts(value: unknown): string[] {
  const hosts = Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string')
    : typeof value === 'string'
      ? [value]
      : [];
  for (const host of hosts) {
    if (!/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+|[0-9a-fA-F:]+)$/.test(host))
      throw new UnstuckError(
        'USAGE',
        `--allow-host must be a host name or address without port or scheme, not '${host}'`,
      );
  }
  return hosts;
}

/**
 * `--upstream URL` (every request) and `--upstream WIRE=URL` (that wire's requests), repeatable:
 * `--upstream anthropic=https://api.anthropic.com --upstream chat=https://api.openai.com` fronts
 * both providers from one port; a request whose wire has no upstream of its own goes to the bare
 * URL, or gets a 404 when there is none.
 */
function parseUpstreams(value: unknown): { fallback: URL | undefined; routes: Map<WireName, URL> } {
  const given = Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
  if (given.length === 0 || given.some((item) => item === ''))
    throw new UnstuckError('USAGE', 'missing --upstream URL (the provider base URL, e.g. https://api.anthropic.com)');
  let fallback: URL | undefined;
  const routes = new Map<WireName, URL>();
  for (const item of given) {
    const named = /^([a-z][a-z0-9-]*)=(.*)$/.exec(item);
    if (named === null) {
      if (fallback !== undefined)
        throw new UnstuckError(
          'USAGE',
          `--upstream URL is given twice; name the wire of each, e.g. --upstream chat=${item}`,
        );
      fallback = parseUpstream(item, '--upstream');
      continue;
    }
    const [, wire = '', url = ''] = named;
    if (!isWireName(wire))
      throw new UnstuckError('USAGE', `--upstream ${wire}=…: unknown wire '${wire}' (one of ${WIRE_NAMES.join(', ')})`);
    if (routes.has(wire)) throw new UnstuckError('USAGE', `--upstream ${wire}=… is given twice`);
    routes.set(wire, parseUpstream(url, `--upstream ${wire}=`));
  }
  return { fallback, routes };
}

export function parseUpstream(value: string, flag: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UnstuckError('USAGE', `${flag} is not a URL: ${value}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UnstuckError('USAGE', `${flag} must be http or https, not ${url.protocol}`);
  if (url.username !== '' || url.password !== '')
    throw new UnstuckError(
      'USAGE',
      `${flag} must not hold credentials; clients send their key (Authorization, x-api-key)`,
    );
  if (url.search !== '')
    throw new UnstuckError('USAGE', `${flag} must not hold a query (each request's own query is what goes upstream)`);
  return url;
}

function parseInteger(value: unknown, flag: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value) || number < min || number > max)
    throw new UnstuckError('USAGE', `${flag} must be a whole number from ${min} to ${max}, not '${String(value)}'`);
  return number;
}
