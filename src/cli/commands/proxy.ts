import type { ProfileName } from '../../core/index.js';
import { getProfile, profileNames, UnstuckError } from '../../core/index.js';
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_UPSTREAM_TIMEOUT_MS,
  serveProxy,
} from '../../http/index.js';
import type { Command } from '../command.js';
import { EXIT } from '../command.js';
import { createLogLines } from '../log-lines.js';

/** How long in-flight requests may go on after SIGTERM/SIGINT before their connections are closed. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;

export const proxyCommand: Command = {
  name: 'proxy',
  summary: 'Run an OpenAI-compatible proxy that repairs chat requests on their way to the provider',
  positionals: '',
  options: {
    upstream: { type: 'string' },
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
  },
  optionHelp: {
    upstream: 'Base URL to forward to, e.g. https://api.deepseek.com (required)',
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
  },
  async run({ values }, io) {
    const upstream = parseUpstream(values.upstream);
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

    const logLines = createLogLines(io.stderr);
    // Served natively (node:http in, undici out), built from the proxy's options: docs/decisions/node-carrier.md.
    const server = await serveProxy(
      {
        upstream: upstream.href,
        maxBodyBytes,
        upstreamTimeoutMs,
        logBodies: values['log-bodies'] === true,
        ...(profile === undefined ? {} : { profile: profile as ProfileName }),
        log: (entry) => logLines.line(entry),
      },
      { port, host, allowHosts, requestTimeoutMs, headersTimeoutMs, maxConnections },
    );
    const removeGuard = guardProcess((entry) => logLines.line(entry));
    try {
      io.stderr.write(
        `${JSON.stringify({ event: 'listening', url: server.url, upstream: `${upstream.origin}${upstream.pathname}`, profile: profile ?? 'openai' })}\n`,
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

function parseUpstream(value: unknown): URL {
  if (typeof value !== 'string' || value === '')
    throw new UnstuckError('USAGE', 'missing --upstream URL (the provider base URL, e.g. https://api.openai.com)');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UnstuckError('USAGE', `--upstream is not a URL: ${value}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UnstuckError('USAGE', `--upstream must be http or https, not ${url.protocol}`);
  if (url.username !== '' || url.password !== '')
    throw new UnstuckError('USAGE', '--upstream must not hold credentials; clients send their key in Authorization');
  return url;
}

function parseInteger(value: unknown, flag: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value) || number < min || number > max)
    throw new UnstuckError('USAGE', `${flag} must be a whole number from ${min} to ${max}, not '${String(value)}'`);
  return number;
}
