/**
 * Load test on loopback (not part of `npm test` or `npm run bench`): `npm run load`.
 * 64 concurrent connections for 30 s through `unstuck proxy` (composed as the CLI composes it) to
 * the strict emulator; half the requests carry a broken history the proxy must repair, a quarter
 * stream. Passes when there are 0 errors, 0 timeouts and 0 non-2xx answers.
 */
import autocannon from 'autocannon';
import { createEmulator } from '../src/emulator/index.js';
import { createNodeFetch, createProxyHandler, serveProxy } from '../src/http/index.js';

const seconds = Number(process.env.UNSTUCK_LOAD_SECONDS ?? 30);
const emulator = createEmulator({ profile: 'openai' });
const upstream = await emulator.listen();
const proxy = await serveProxy(createProxyHandler({ upstream: upstream.url, profile: 'openai', fetch: createNodeFetch() }), { port: 0 });

const valid = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'again' }];
const broken = [
  { role: 'user', content: 'weather?' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
  { role: 'user', content: 'never mind' },
];
const bodies = [
  JSON.stringify({ model: 'gpt-4o', messages: valid }),
  JSON.stringify({ model: 'gpt-4o', messages: broken }),
  JSON.stringify({ model: 'gpt-4o', messages: broken, stream: true }),
  JSON.stringify({ model: 'gpt-4o', messages: valid, stream: true }),
];

const result = await autocannon({
  url: `${proxy.url}/v1/chat/completions`,
  connections: 64,
  duration: seconds,
  requests: bodies.map((body) => ({ method: 'POST' as const, path: '/v1/chat/completions', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-load' }, body })),
});
const invalid = emulator.requests.filter((request) => request.violations.length > 0).length;
console.log(
  `load: 64 connections, ${seconds} s: ${result.requests.total} requests, ${result.requests.average.toFixed(0)} req/s, latency p50 ${result.latency.p50} ms p99 ${result.latency.p99} ms, errors ${result.errors}, timeouts ${result.timeouts}, non-2xx ${result.non2xx}, invalid requests seen upstream ${invalid}`,
);
await proxy.close();
await upstream.close();
process.exitCode = result.errors === 0 && result.timeouts === 0 && result.non2xx === 0 && invalid === 0 ? 0 : 1;
