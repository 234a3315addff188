import type { ProxyOptions } from '../create-proxy-core.js';
import { createProxyCore } from '../create-proxy-core.js';
import { createProxyHandler } from '../create-proxy-handler.js';
import type { ProxyMetrics } from '../proxy-metrics.js';
import { createNodeFetch } from './create-node-fetch.js';
import type { ServeOptions, ServingProxy } from './node-server.js';
import { listenNode } from './node-server.js';
import { intakeRequest } from './request-intake.js';
import { serveHandler } from './serve-handler.js';
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
  if (typeof proxy === 'function')
    throw new TypeError('serveProxy takes the proxy options; serve a (Request) => Response handler with serveHandler');
  const core = createProxyCore(proxy);
  // The native relay holds one connection pool, to one origin: routes to several origins are
  // served by the proxy handler on the generic carrier instead (docs/decisions/node-carrier.md).
  if (!core.singleOrigin) {
    const handler = createProxyHandler({ ...proxy, metrics: core.metrics, fetch: createNodeFetch() });
    return Object.assign(await serveHandler(handler, options), { native: false, metrics: core.metrics });
  }
  const pool = createUpstreamPool(core);
  const served = await listenNode(
    options,
    (incoming, outgoing, origin) => intakeRequest(core, pool, incoming, outgoing, origin),
    () => pool.destroy(),
  );
  return Object.assign(served, { native: true, metrics: core.metrics });
}
