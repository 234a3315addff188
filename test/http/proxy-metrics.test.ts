import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createProxyMetrics } from '../../src/http/proxy-metrics.js';

test('metrics render as Prometheus text with requests, repairs by rule, heal retries and latency', () => {
  const metrics = createProxyMetrics();
  metrics.countRequest(200);
  metrics.countRequest(200);
  metrics.countRequest(502);
  metrics.countRepair('tool-calls-unanswered');
  metrics.countRepair('tool-result-orphan');
  metrics.countRepair('tool-calls-unanswered');
  metrics.countHealRetry();
  metrics.countUpstreamFailure('timeout');
  metrics.observeUpstreamLatency(0.003);
  metrics.observeUpstreamLatency(0.2);
  const text = metrics.render();
  assert.match(text, /^# TYPE unstuck_proxy_requests_total counter$/m);
  assert.match(text, /^unstuck_proxy_requests_total\{status="200"\} 2$/m);
  assert.match(text, /^unstuck_proxy_requests_total\{status="502"\} 1$/m);
  assert.match(text, /^unstuck_proxy_repairs_total\{rule="tool-calls-unanswered"\} 2$/m);
  assert.match(text, /^unstuck_proxy_repairs_total\{rule="tool-result-orphan"\} 1$/m);
  assert.match(text, /^unstuck_proxy_heal_retries_total 1$/m);
  assert.match(text, /^unstuck_proxy_upstream_failures_total\{kind="timeout"\} 1$/m);
  assert.match(text, /^unstuck_proxy_upstream_latency_seconds_bucket\{le="0.005"\} 1$/m);
  assert.match(text, /^unstuck_proxy_upstream_latency_seconds_bucket\{le="0.25"\} 2$/m);
  assert.match(text, /^unstuck_proxy_upstream_latency_seconds_bucket\{le="\+Inf"\} 2$/m);
  assert.match(text, /^unstuck_proxy_upstream_latency_seconds_count 2$/m);
  // Every sample line is `name{labels} number` or `name number`: what a scraper parses.
  for (const line of text.trimEnd().split('\n')) {
    if (!line.startsWith('#')) assert.match(line, /^[a-z_]+(\{[a-z]+="[^"]*"\})? [0-9.e+-]+$/, line);
  }
});

test('a rule name with quotes cannot break the exposition format', () => {
  const metrics = createProxyMetrics();
  metrics.countRepair('odd"rule\\x');
  assert.match(metrics.render(), /rule="odd\\"rule\\\\x"/);
});
