/** Upper bounds (seconds) of the upstream latency histogram: from loopback to slow reasoning models. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120] as const;

export interface ProxyMetrics {
  countRequest(status: number): void;
  countRepair(rule: string): void;
  countHealRetry(): void;
  countUpstreamFailure(kind: 'unreachable' | 'timeout' | 'stream-error'): void;
  observeUpstreamLatency(seconds: number): void;
  /** Prometheus text exposition format 0.0.4. */
  render(): string;
}

export function createProxyMetrics(): ProxyMetrics {
  const requests = new Map<string, number>();
  const repairs = new Map<string, number>();
  const failures = new Map<string, number>();
  const buckets = LATENCY_BUCKETS.map(() => 0);
  let healRetries = 0;
  let latencyCount = 0;
  let latencySum = 0;

  const bump = (map: Map<string, number>, key: string): void => {
    map.set(key, (map.get(key) ?? 0) + 1);
  };

  return {
    countRequest: (status) => bump(requests, String(status)),
    countRepair: (rule) => bump(repairs, rule),
    countHealRetry: () => {
      healRetries += 1;
    },
    countUpstreamFailure: (kind) => bump(failures, kind),
    observeUpstreamLatency(seconds) {
      latencyCount += 1;
      latencySum += seconds;
      LATENCY_BUCKETS.forEach((bound, index) => {
        if (seconds <= bound) buckets[index] = (buckets[index] ?? 0) + 1;
      });
    },
    render() {
      const lines: string[] = [];
      const family = (name: string, type: string, help: string): void => {
        lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      };
      family('unstuck_proxy_requests_total', 'counter', 'Requests answered by the proxy, by HTTP status.');
      for (const [status, count] of sorted(requests))
        lines.push(`unstuck_proxy_requests_total{status="${status}"} ${count}`);
      family('unstuck_proxy_repairs_total', 'counter', 'Requests repaired before forwarding, by rule repaired.');
      for (const [rule, count] of sorted(repairs))
        lines.push(`unstuck_proxy_repairs_total{rule="${escapeLabel(rule)}"} ${count}`);
      family(
        'unstuck_proxy_heal_retries_total',
        'counter',
        'Requests retried once after the upstream rejected them with a pairing error.',
      );
      lines.push(`unstuck_proxy_heal_retries_total ${healRetries}`);
      family('unstuck_proxy_upstream_failures_total', 'counter', 'Upstream failures the proxy answered for, by kind.');
      for (const [kind, count] of sorted(failures))
        lines.push(`unstuck_proxy_upstream_failures_total{kind="${kind}"} ${count}`);
      family(
        'unstuck_proxy_upstream_latency_seconds',
        'histogram',
        'Time from sending a request upstream to its response headers.',
      );
      LATENCY_BUCKETS.forEach((bound, index) =>
        lines.push(`unstuck_proxy_upstream_latency_seconds_bucket{le="${bound}"} ${buckets[index] ?? 0}`),
      );
      lines.push(`unstuck_proxy_upstream_latency_seconds_bucket{le="+Inf"} ${latencyCount}`);
      lines.push(`unstuck_proxy_upstream_latency_seconds_sum ${latencySum}`);
      lines.push(`unstuck_proxy_upstream_latency_seconds_count ${latencyCount}`);
      return `${lines.join('\n')}\n`;
    },
  };
}

function sorted(map: Map<string, number>): [string, number][] {
  return [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
