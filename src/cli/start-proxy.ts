import type { ProfileName } from '../core/index.js';
import type { ProxyLogEntry, ProxyRepairEvent, ServeOptions, ServingProxy, WireName } from '../http/index.js';
import { serveProxy } from '../http/index.js';

export interface StartProxyOptions extends ServeOptions {
  /** Takes every request whose wire has no route of its own. */
  upstream?: URL;
  routes?: ReadonlyMap<WireName, URL>;
  profile?: ProfileName;
  maxBodyBytes?: number;
  upstreamTimeoutMs?: number;
  logBodies?: boolean;
  /** See `ProxyOptions.pathToken`: requests without `/t/<token>` in front of their path get a 403. */
  pathToken?: string;
  log: (entry: ProxyLogEntry) => void;
  /** See `ProxyOptions.onRepair`: each repaired request's body before and after (`unstuck run --report`). */
  onRepair?: (event: ProxyRepairEvent) => void;
}

/**
 * The sanitizing proxy as the CLI serves it: built from its options by `serveProxy` (natively, or
 * on the generic carrier when routes point at several origins). `unstuck proxy` and `unstuck run` both start it here, so the
 * proxy a wrapped agent talks to is the very one `unstuck proxy` runs.
 */
export async function startProxy(options: StartProxyOptions): Promise<ServingProxy> {
  const { upstream, routes, profile, maxBodyBytes, upstreamTimeoutMs, logBodies, pathToken, log, onRepair, ...serve } =
    options;
  return serveProxy(
    {
      ...(upstream === undefined ? {} : { upstream: upstream.href }),
      routes: Object.fromEntries([...(routes ?? [])].map(([wire, url]) => [wire, url.href])),
      ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
      ...(upstreamTimeoutMs === undefined ? {} : { upstreamTimeoutMs }),
      logBodies: logBodies === true,
      ...(pathToken === undefined ? {} : { pathToken }),
      ...(profile === undefined ? {} : { profile }),
      log,
      ...(onRepair === undefined ? {} : { onRepair }),
    },
    serve,
  );
}
