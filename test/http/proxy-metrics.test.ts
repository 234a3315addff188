import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { createProxyMetrics } from '../../src/http/proxy-metrics.js';

test('metrics render as Prometheus text with requests, repairs by rule, heal retries and latency, each by wire', async () => {
  const metrics = createProxyMetrics();
  metrics.countRequest(200, 'chat');
  metrics.countRequest(200, 'chat');
  metrics.countRequest(200, 'anthropic');
  metrics.countRequest(502, 'chat');
  metrics.countRepair('tool-calls-unanswered', 'chat');
  metrics.countRepair('tool-result-orphan', 'chat');
  metrics.countRepair('tool-calls-unanswered', 'chat');
  metrics.countRepair('text-block-empty', 'anthropic');
  metrics.countHealRetry('anthropic');
  metrics.countUpstreamFailure('timeout', 'chat');
  metrics.observeUpstreamLatency(0.003, 'chat');
  metrics.observeUpstreamLatency(0.2, 'chat');
  const text = await metrics.collect();
  assert.match(text, /^# TYPE unstuck_proxy_requests_total counter$/m);
  assert.match(text, /^unstuck_proxy_requests_total\{status="200",wire="chat"\} 2$/m);
  assert.match(text, /^unstuck_proxy_requests_total\{status="200",wire="anthropic"\} 1$/m);
  assert.match(text, /^unstuck_proxy_requests_total\{status="502",wire="chat"\} 1$/m);
  assert.match(text, /^unstuck_proxy_repairs_total\{rule="tool-calls-unanswered",wire="chat"\} 2$/m);
  assert.match(text, /^unstuck_proxy_repairs_total\{rule="tool-result-orphan",wire="chat"\} 1$/m);
  assert.match(text, /^unstuck_proxy_repairs_total\{rule="text-block-empty",wire="anthropic"\} 1$/m);
  assert.match(text, /^unstuck_proxy_heal_retries_total\{wire="anthropic"\} 1$/m);
  assert.match(text, /^unstuck_proxy_upstream_failures_total\{kind="timeout",wire="chat"\} 1$/m);
  assert.match(text, /^unstuck_proxy_upstream_latency_seconds_bucket\{le="0.005",wire="chat"\} 1$/m);
  assert.match(text, /^unstuck_proxy_upstream_latency_seconds_bucket\{le="0.25",wire="chat"\} 2$/m);
  assert.match(text, /^unstuck_proxy_upstream_latency_seconds_bucket\{le="\+Inf",wire="chat"\} 2$/m);
  assert.match(text, /^unstuck_proxy_upstream_latency_seconds_count\{wire="chat"\} 2$/m);
  // prom-client's process and event-loop metrics come with them.
  assert.match(text, /^process_cpu_user_seconds_total \d/m);
  assert.match(text, /^nodejs_eventloop_lag_seconds \d/m);
  assert.match(metrics.contentType, /^text\/plain; version=0\.0\.4/);
  // Every sample line is `name{labels} number` or `name number`: what a scraper parses.
  for (const line of text.trimEnd().split('\n')) {
    if (line !== '' && !line.startsWith('#'))
      assert.match(line, /^[a-z0-9_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? ([0-9.e+-]+|NaN|Nan)$/, line);
  }
});

test('collect() renders the counters as they are when it is called', async () => {
  const metrics = createProxyMetrics();
  metrics.countRequest(200, 'anthropic');
  assert.match(await metrics.collect(), /^unstuck_proxy_requests_total\{status="200",wire="anthropic"\} 1$/m);
  metrics.countRequest(200, 'anthropic');
  assert.match(await metrics.collect(), /^unstuck_proxy_requests_total\{status="200",wire="anthropic"\} 2$/m);
});

test('a rule name with quotes cannot break the exposition format', async () => {
  const metrics = createProxyMetrics();
  metrics.countRepair('odd"rule\\x', 'chat');
  assert.match(await metrics.collect(), /rule="odd\\"rule\\\\x"/);
});

test('an application registry that merged the proxy registry renders the request counts as they are', async () => {
  const metrics = createProxyMetrics();
  const application = Registry.merge([metrics.registry, new Registry()]);
  for (let index = 0; index < 3; index += 1) metrics.countRequest(200, 'gemini');
  metrics.countRequest(404, 'other');
  const first = await application.metrics();
  assert.match(first, /^unstuck_proxy_requests_total\{status="200",wire="gemini"\} 3$/m);
  assert.match(first, /^unstuck_proxy_requests_total\{status="404",wire="other"\} 1$/m);
  metrics.countRequest(200, 'gemini');
  // Either registry renders every count once: the proxy's own collect() and the merged one agree.
  assert.match(await metrics.collect(), /^unstuck_proxy_requests_total\{status="200",wire="gemini"\} 4$/m);
  assert.match(await application.metrics(), /^unstuck_proxy_requests_total\{status="200",wire="gemini"\} 4$/m);
  const counter = metrics.registry.getSingleMetric('unstuck_proxy_requests_total');
  const values = (await counter?.get())?.values ?? [];
  assert.deepEqual(
    values.map((value) => [value.labels, value.value]),
    [
      [{ status: '200', wire: 'gemini' }, 4],
      [{ status: '404', wire: 'other' }, 1],
    ],
  );
});
