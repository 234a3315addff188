import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** Upper bounds (seconds) of the upstream latency histogram: from loopback to slow reasoning models. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/**
 * The proxy's metrics, each labelled with the wire of the request (`chat`, `anthropic`, or `other`
 * for a path no wire owns, `/healthz` and `/metrics` among them). The counters and the histogram
 * are prom-client's, in a registry of this proxy's own; the process and event-loop metrics
 * (`process_*`, `nodejs_*`) are prom-client's default ones, collected once per process.
 */
export interface ProxyMetrics {
  countRequest(status: number, wire: string): void;
  countRepair(rule: string, wire: string): void;
  countHealRetry(wire: string): void;
  countUpstreamFailure(kind: 'unreachable' | 'timeout' | 'stream-error', wire: string): void;
  observeUpstreamLatency(seconds: number, wire: string): void;
  /** The exposition as of now (Prometheus text format 0.0.4), rendered fresh. */
  collect(): Promise<string>;
  readonly contentType: string;
  /** The registry of the proxy's own metrics, to merge into an application's registry. */
  readonly registry: Registry;
}

let processRegistry: Registry | undefined;

/**
 * The requests counter's counts on the request path: a plain number per (wire, status), handed to
 * prom-client when the counter is collected (its `collect` hook runs on every render, this proxy's
 * `/metrics` or a registry an application merged ours into), so what is rendered is always up to
 * date. prom-client's own `inc(labels)` builds a label hash and validates the labels on every call,
 * which here would be once per request (docs/decisions/http-proxy-cost.md).
 */
class RequestCounts {
  readonly #byWire = new Map<string, Map<number, { labels: { status: string; wire: string }; count: number }>>();

  add(status: number, wire: string): void {
    let byStatus = this.#byWire.get(wire);
    if (byStatus === undefined) {
      byStatus = new Map();
      this.#byWire.set(wire, byStatus);
    }
    const slot = byStatus.get(status);
    if (slot === undefined) byStatus.set(status, { labels: { status: String(status), wire }, count: 1 });
    else slot.count += 1;
  }

  /** Adds the counts so far to the counter, and starts again from zero. */
  flush(counter: Counter<'status' | 'wire'>): void {
    for (const byStatus of this.#byWire.values())
      for (const slot of byStatus.values()) {
        if (slot.count === 0) continue;
        counter.inc(slot.labels, slot.count);
        slot.count = 0;
      }
  }
}

/** One registry of the default metrics per process: each collector (event-loop delay, GC) is set up once. */
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export function createProxyMetrics(): ProxyMetrics {
  const registry = new Registry();
  const registers = [registry];
  const counts = new RequestCounts();
  new Counter({
    name: 'unstuck_proxy_requests_total',
    help: 'Requests answered by the proxy, by HTTP status and wire.',
    labelNames: ['status', 'wire'] as const,
    registers,
    collect() {
      counts.flush(this);
    },
  });
  const repairs = new Counter({
    name: 'unstuck_proxy_repairs_total',
    help: 'Requests repaired before forwarding, by rule repaired and wire.',
    labelNames: ['rule', 'wire'],
    registers,
  });
  const healRetries = new Counter({
    name: 'unstuck_proxy_heal_retries_total',
    help: 'Requests retried once after the upstream rejected them with a pairing error, by wire.',
    labelNames: ['wire'],
    registers,
  });
  const failures = new Counter({
    name: 'unstuck_proxy_upstream_failures_total',
    help: 'Upstream failures the proxy answered for, by kind and wire.',
    labelNames: ['kind', 'wire'],
    registers,
  });
  const latency = new Histogram({
    name: 'unstuck_proxy_upstream_latency_seconds',
    help: 'Time from sending a request upstream to its response headers, by wire.',
    labelNames: ['wire'],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  // One labelled child per wire: prom-client's `observe(labels, value)` makes a closure per call, a child's does not.
  const latencyOf = new Map<string, { observe(value: number): void }>();
  let merged: Registry | undefined;
  const everything = (): Registry => {
    merged ??= Registry.merge([registry, processMetrics()]);
    return merged;
  };

  // Rendered only when /metrics is asked (both carriers await collect()), never on a timer or on the request path.
  return {
    countRequest(status, wire) {
      counts.add(status, wire);
    },
    countRepair(rule, wire) {
      repairs.inc({ rule, wire });
    },
    countHealRetry(wire) {
      healRetries.inc({ wire });
    },
    countUpstreamFailure(kind, wire) {
      failures.inc({ kind, wire });
    },
    observeUpstreamLatency(seconds, wire) {
      let child = latencyOf.get(wire);
      if (child === undefined) {
        child = latency.labels({ wire });
        latencyOf.set(wire, child);
      }
      child.observe(seconds);
    },
    collect: () => everything().metrics(),
    contentType: registry.contentType,
    registry,
  };
}
