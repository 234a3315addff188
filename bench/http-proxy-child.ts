/**
 * A proxy in its own process for bench/http.bench.ts, so its CPU time can be measured apart from
 * the load generator's: `unstuck` (composed as the CLI composes it) or `baseline` (the minimal
 * pass-through). Answers IPC 'cpu' with process.cpuUsage().
 */
import { createNodeFetch, createProxyHandler, serveProxy } from '../src/http/index.js';
import { startBaselineProxy } from './http-fixtures.js';

const [kind, upstream] = process.argv.slice(2);
if (upstream === undefined) throw new Error('usage: http-proxy-child.ts unstuck|baseline UPSTREAM');
const served = kind === 'baseline' ? await startBaselineProxy(upstream) : await serveProxy(createProxyHandler({ upstream, profile: 'deepseek', fetch: createNodeFetch() }), { port: 0 });
process.on('message', (message) => {
  if (message === 'cpu') process.send?.(process.cpuUsage());
  if (message === 'stop') void served.close().then(() => process.disconnect());
});
process.send?.({ url: served.url });
