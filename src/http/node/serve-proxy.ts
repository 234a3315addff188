import type { ProxyOptions } from '../create-proxy-core.js';
import { createProxyCore } from '../create-proxy-core.js';
import type { ProxyMetrics } from '../proxy-metrics.js';
import type { ServeOptions, ServingProxy } from './node-server.js';
import { listenNode } from './node-server.js';
import { intakeRequest } from './request-intake.js';
import { createUpstreamPool } from './upstream-pool.js';

/**
 * Serves the proxy natively, built from its options: the same proxy core as `createProxyHandler`
 * decides everything, node:http carries the client side and an undici pool the upstream side
 * (request-intake.ts, relay.ts; docs/decisions/node-carrier.md, http-native-server.md and
 * http-upstream-undici.md). This is how `unstuck proxy` runs. A `(Request) => Response` handler,
 * the proxy's own included, is served by `serveHandler` instead; which one carries a proxy is the
 * caller's choice, never guessed from the handler.
 */
export async function serveProxy(
  proxy: ProxyOptions,
  options: ServeOptions = {},
): Promise<ServingProxy & { readonly metrics: ProxyMetrics }> {
  const core = createProxyCore(proxy);
  const pool = createUpstreamPool(core);
  const served = await listenNode(
    options,
    (incoming, outgoing, origin) => intakeRequest(core, pool, incoming, outgoing, origin),
    () => pool.destroy(),
  );
  return Object.assign(served, { native: true, metrics: core.metrics });
}
