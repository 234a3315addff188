import { getProfile, profileNames, UnstuckError } from '../../core/index.js';
import type { ProfileName } from '../../core/index.js';
import { createNodeFetch, createProxyHandler, DEFAULT_MAX_BODY_BYTES, DEFAULT_UPSTREAM_TIMEOUT_MS, serveProxy } from '../../http/index.js';
import type { Command } from '../command.js';
import { EXIT } from '../command.js';
import { createLogLines } from '../log-lines.js';

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
  },
  optionHelp: {
    upstream: 'Base URL to forward to, e.g. https://api.deepseek.com (required)',
    port: 'Port to listen on (default 8787; 0 picks a free one)',
    host: 'Address to bind (default 127.0.0.1; bind others only on a trusted network)',
    profile: `Provider rules to repair for: ${profileNames.join(', ')} (default openai)`,
    'log-bodies': 'Put request bodies in the log lines (message contents; keys are never logged)',
    'max-body-bytes': `Answer 413 to larger request bodies (default ${DEFAULT_MAX_BODY_BYTES})`,
    'upstream-timeout-ms': `Answer 504 / end the stream when the upstream is silent this long (default ${DEFAULT_UPSTREAM_TIMEOUT_MS})`,
  },
  async run({ values }, io) {
    const upstream = parseUpstream(values.upstream);
    const port = parseInteger(values.port, '--port', 8787, 0, 65535);
    const maxBodyBytes = parseInteger(values['max-body-bytes'], '--max-body-bytes', DEFAULT_MAX_BODY_BYTES, 1, Number.MAX_SAFE_INTEGER);
    const upstreamTimeoutMs = parseInteger(values['upstream-timeout-ms'], '--upstream-timeout-ms', DEFAULT_UPSTREAM_TIMEOUT_MS, 1, 2_147_483_647);
    const profile = typeof values.profile === 'string' ? values.profile : undefined;
    if (profile !== undefined) getProfile(profile as ProfileName); // an unknown name fails here, as one line
    const host = typeof values.host === 'string' ? values.host : '127.0.0.1';

    const logLines = createLogLines(io.stderr);
    const handler = createProxyHandler({
      upstream: upstream.href,
      fetch: createNodeFetch(),
      maxBodyBytes,
      upstreamTimeoutMs,
      logBodies: values['log-bodies'] === true,
      ...(profile === undefined ? {} : { profile: profile as ProfileName }),
      log: (entry) => logLines.line(entry),
    });
    const server = await serveProxy(handler, { port, host });
    io.stderr.write(`${JSON.stringify({ event: 'listening', url: server.url, upstream: `${upstream.origin}${upstream.pathname}`, profile: profile ?? 'openai' })}\n`);
    await new Promise<void>((resolve) => {
      if (io.signal === undefined) return; // runs until the process is killed
      if (io.signal.aborted) resolve();
      io.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await server.close();
    logLines.flush();
    return EXIT.ok;
  },
};

function parseUpstream(value: unknown): URL {
  if (typeof value !== 'string' || value === '') throw new UnstuckError('USAGE', 'missing --upstream URL (the provider base URL, e.g. https://api.openai.com)');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UnstuckError('USAGE', `--upstream is not a URL: ${value}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UnstuckError('USAGE', `--upstream must be http or https, not ${url.protocol}`);
  if (url.username !== '' || url.password !== '') throw new UnstuckError('USAGE', '--upstream must not hold credentials; clients send their key in Authorization');
  return url;
}

function parseInteger(value: unknown, flag: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value) || number < min || number > max) throw new UnstuckError('USAGE', `${flag} must be a whole number from ${min} to ${max}, not '${String(value)}'`);
  return number;
}
