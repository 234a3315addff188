import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { test } from 'node:test';

/**
 * The soak (bench/proxy-soak.ts, `npm run soak` runs it for 60 s) for 5 s: the real proxy process
 * against every misbehaving upstream and client at once. It must not crash, every /healthz must
 * answer, nothing may escape to the process guard, and RSS stays under the soak's bound.
 */
test('5 s of misbehaving upstreams and clients at once: no crash, /healthz always answers, bounded memory', {
  timeout: 60_000,
}, async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/proxy-soak.ts', '--seconds', '5', '--json'], {
    cwd: join(import.meta.dirname, '../..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  const figures = JSON.parse(out) as {
    crashes: number;
    exitCode: number;
    escapedErrors: number;
    healthFailures: number;
    healthChecks: number;
    rssMaxMiB: number;
    counts: Record<string, number>;
  };
  assert.equal(figures.crashes, 0);
  assert.equal(figures.exitCode, 0);
  assert.equal(figures.escapedErrors, 0);
  assert.equal(figures.healthFailures, 0);
  assert.ok(figures.healthChecks > 0);
  assert.ok(
    (figures.counts['slowloris closed by the proxy'] ?? 0) > 0,
    'slowloris connections are closed by the headers timeout',
  );
  assert.ok((figures.counts['bad Host refused 421'] ?? 0) > 0);
  assert.equal(code, 0, out);
});
