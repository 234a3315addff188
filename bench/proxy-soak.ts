/**
 * `npm run soak [-- --seconds N] [--json] [--plain]`: the real `unstuck proxy` process (from the sources,
 * through tsx) against misbehaving upstreams and misbehaving clients at once, for 60 s by default.
 * Loopback only; every worker stops at the deadline and the whole run at deadline + 30 s.
 *
 * Upstreams: every scenario of test/http/support/misbehaving-upstream.ts (compressed answers
 * against `accept-encoding: identity`, with `Connection: close`, small and large; compression
 * bombs; lying Content-Length; resets; garbage status lines; huge 400s on the chat path), read by
 * fast and by slow clients. Clients: slowloris (headers that never end), request bodies that never
 * end, streams aborted midway, bodies over the limit, a `Host` that is not the proxy's.
 *
 * Meanwhile it samples the proxy's RSS (/proc/PID/status) and times `GET /healthz`. It prints
 * crashes (must be 0), escaped errors in the log, max RSS, health latency; exits 1 when the proxy
 * crashed, a health check failed, or RSS passed the bound.
 */
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { connect } from 'node:net';
import { listenMisbehaving, SCENARIO_NAMES } from '../test/http/support/misbehaving-upstream.js';
import { startProxyProcess } from '../test/http/support/proxy-process.js';
import { rawRequest } from '../test/http/support/raw-client.js';

const args = process.argv.slice(2);
const seconds = Number(args[args.indexOf('--seconds') + 1] ?? 60) || 60;
const asJson = args.includes('--json');
const RSS_BOUND = 768 * 1024 * 1024;
const deadline = Date.now() + seconds * 1000;
setTimeout(
  () => {
    process.stderr.write('soak: did not stop in time\n');
    process.exit(2);
  },
  (seconds + 30) * 1000,
).unref();

const upstream = await listenMisbehaving();
// `--plain`: no flags but the upstream, to run the soak against a build that predates them (a baseline).
const flags = args.includes('--plain')
  ? []
  : [
      '--headers-timeout-ms',
      '2000',
      '--request-timeout-ms',
      '5000',
      '--upstream-timeout-ms',
      '5000',
      '--max-connections',
      '256',
      '--drain-timeout-ms',
      '2000',
    ];
const proxy = await startProxyProcess(upstream.url, flags);
const port = Number(new URL(proxy.url).port);
const pid = proxy.child.pid as number;

const counts: Record<string, number> = {};
const count = (key: string): void => {
  counts[key] = (counts[key] ?? 0) + 1;
};
const running = (): boolean => Date.now() < deadline && proxy.exited() === undefined;
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function rssOf(): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}

// --- the samplers ----------------------------------------------------------------------------

const rss: number[] = [];
const health: number[] = [];
let healthFailures = 0;
const rssSampler = setInterval(() => {
  const value = rssOf();
  if (value !== undefined) rss.push(value);
}, 250);

async function probeHealth(): Promise<void> {
  while (running()) {
    const started = performance.now();
    try {
      const answer = await Promise.race([rawRequest(`${proxy.url}/healthz`), pause(5000).then(() => undefined)]);
      if (answer?.status === 200) health.push(performance.now() - started);
      else healthFailures += 1;
    } catch {
      if (proxy.exited() === undefined) healthFailures += 1;
    }
    await pause(200);
  }
}

// --- misbehaving upstreams, through fast and slow clients --------------------------------------

const HEAVY = new Set(['gzip-bomb', 'gzip-bomb-400', 'huge-400', 'gzip-text-8m']);
const CHAT_BODY = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });

async function upstreamWorker(index: number): Promise<void> {
  let round = 0;
  while (running()) {
    round += 1;
    const names = SCENARIO_NAMES.filter((name) => !HEAVY.has(name) || round % 8 === index % 8);
    const name = names[(round * 7 + index * 13) % names.length] as string;
    const chat = name.endsWith('400');
    try {
      const answer = await rawRequest(`${proxy.url}/v1/${chat ? 'chat/completions' : 'models'}?s=${name}`, {
        ...(chat ? { method: 'POST', body: CHAT_BODY } : {}),
        ...(round % 3 === 0 ? { slowMs: 150 } : {}),
        keep: false,
      });
      count(`upstream ${answer.status === 502 ? '502' : answer.cut ? 'cut' : 'whole'}`);
    } catch {
      count('upstream connection error');
    }
  }
}

// --- misbehaving clients -----------------------------------------------------------------------

/** Keeps `text` trickling into a connection (one more piece every `everyMs`) until the proxy closes it, then opens another. */
async function trickler(kind: string, opening: string, piece: string, everyMs: number): Promise<void> {
  while (running()) {
    await new Promise<void>((resolve) => {
      const socket: Socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(opening);
      const timer = setInterval(() => {
        if (!running()) socket.destroy();
        else socket.write(piece);
      }, everyMs);
      socket.resume();
      socket.once('close', () => {
        clearInterval(timer);
        count(`${kind} closed by the proxy`);
        resolve();
      });
    });
  }
}

async function abortedStreams(): Promise<void> {
  let round = 0;
  while (running()) {
    round += 1;
    await new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(`GET /v1/models?s=gzip-bomb HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`);
      socket.resume();
      setTimeout(() => socket.destroy(), 20 + (round % 10) * 15);
      socket.once('close', () => {
        count('aborted streams');
        resolve();
      });
    });
  }
}

async function hugeBodies(): Promise<void> {
  const block = Buffer.alloc(1024 * 1024, 0x61);
  while (running()) {
    await new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let failure = '';
      socket.on('error', (error: NodeJS.ErrnoException) => (failure = error.code ?? 'error'));
      let answer = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (answer += chunk));
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`,
      );
      let sent = 0;
      const more = (): void => {
        // 40 MiB, past the 32 MiB limit, as fast as the proxy reads.
        while (sent < 40 && !socket.destroyed) {
          sent += 1;
          if (!socket.write(`${block.length.toString(16)}\r\n${block.toString('latin1')}\r\n`)) {
            socket.once('drain', more);
            return;
          }
        }
        socket.end('0\r\n\r\n');
      };
      more();
      socket.once('close', () => {
        count(
          /^HTTP\/1\.1 413/.test(answer)
            ? 'huge bodies refused 413'
            : answer === '' && failure !== ''
              ? `huge bodies reset before the 413 was read (${failure})`
              : `huge bodies other: ${JSON.stringify(answer.slice(0, 40))}`,
        );
        resolve();
      });
    });
  }
}

async function badHosts(): Promise<void> {
  while (running()) {
    try {
      const answer = await rawRequest(`${proxy.url}/metrics`, { headers: { host: 'rebind.attacker.example' } });
      count(answer.status === 421 ? 'bad Host refused 421' : `bad Host answered ${answer.status}`);
    } catch {
      count('bad Host connection error');
    }
    await pause(50);
  }
}

// --- the run -----------------------------------------------------------------------------------

const startRss = rssOf() ?? 0;
const workers = [
  probeHealth(),
  ...[0, 1, 2, 3].map((index) => upstreamWorker(index)),
  ...Array.from({ length: 20 }, () =>
    trickler('slowloris', 'GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\n', 'x-slow: 1\r\n', 500),
  ),
  ...Array.from({ length: 10 }, () =>
    trickler(
      'endless bodies',
      'POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
      '1\r\n \r\n',
      100,
    ),
  ),
  abortedStreams(),
  hugeBodies(),
  badHosts(),
];
await Promise.all(workers);
clearInterval(rssSampler);

const crashed = proxy.exited();
const { code } = await proxy.stop('SIGTERM');
await upstream.close();

const sorted = [...health].sort((a, b) => a - b);
const quantile = (q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
const maxRss = Math.max(startRss, ...rss);
const escaped = proxy
  .stderr()
  .split('\n')
  .filter((line) => line.includes('"uncaught-error"')).length;
const logLines = proxy
  .stderr()
  .split('\n')
  .filter((line) => line.startsWith('{"id"')).length;
const figures = {
  seconds,
  crashes: crashed === undefined ? 0 : 1,
  exitCode: code,
  escapedErrors: escaped,
  logLines,
  rssStartMiB: round(startRss / 2 ** 20),
  rssMaxMiB: round(maxRss / 2 ** 20),
  rssEndMiB: round((rss.at(-1) ?? 0) / 2 ** 20),
  healthChecks: health.length,
  healthFailures,
  healthMs: { p50: round(quantile(0.5)), p99: round(quantile(0.99)), max: round(sorted.at(-1) ?? Number.NaN) },
  counts,
};
if (asJson) process.stdout.write(`${JSON.stringify(figures)}\n`);
else {
  process.stdout.write(
    `soak ${seconds} s: crashes ${figures.crashes}, exit ${code}, escaped errors ${escaped}, ${logLines} exchanges logged\n` +
      `  proxy RSS: start ${figures.rssStartMiB} MiB, max ${figures.rssMaxMiB} MiB, end ${figures.rssEndMiB} MiB\n` +
      `  /healthz: ${health.length} checks, ${healthFailures} failed, p50 ${figures.healthMs.p50} ms, p99 ${figures.healthMs.p99} ms, max ${figures.healthMs.max} ms\n` +
      Object.entries(counts)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([key, value]) => `  ${key}: ${value}\n`)
        .join(''),
  );
}
const ok = figures.crashes === 0 && code === 0 && healthFailures === 0 && escaped === 0 && maxRss < RSS_BOUND;
process.exit(ok ? 0 : 1);

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
