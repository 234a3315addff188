export type { ProxyHandler, ProxyHandlerOptions, ProxyLogEntry, ProxyRequest } from './create-proxy-handler.js';
export { createProxyHandler, DEFAULT_MAX_BODY_BYTES, DEFAULT_UPSTREAM_TIMEOUT_MS } from './create-proxy-handler.js';
export type { RepairEvent, SanitizingFetchOptions } from './create-sanitizing-fetch.js';
export { createSanitizingFetch } from './create-sanitizing-fetch.js';
export { isChatCompletionsPath } from './is-chat-completions-path.js';
export type { ServeOptions, ServingProxy } from './node-http-adapter.js';
export {
  createNodeFetch,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  serveProxy,
} from './node-http-adapter.js';
export type { ProxyMetrics } from './proxy-metrics.js';
export { createProxyMetrics } from './proxy-metrics.js';
export type { RepairPolicy } from './sanitize-chat-body.js';
export type { WireName } from './wires/http-wire.js';
export { isWireName, WIRE_NAMES } from './wires/wire-table.js';
