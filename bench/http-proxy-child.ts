/**
 * A proxy in its own process for bench/http.bench.ts, so its CPU time can be measured apart from
 * the load generator's: `unstuck` (the CLI's own `unstuck proxy` command, run in this process,
 * logging one JSON line per request to stderr as it does, which the bench points at a file) or
 * `baseline` (the minimal pass-through) or `baseline-undici` (the same on undici, for context), or
 * `unstuck-generic` (routes to two origins: the generic path). Answers IPC 'cpu' with process.cpuUsage().
 */
import { run } from '../src/cli/run.js';
import { startBaselineProxy, startUndiciBaselineProxy } from './http-fixtures.js';

const [kind, upstream] = process.argv.slice(2);
if (upstream === undefined) throw new Error('usage: http-proxy-child.ts unstuck|baseline|baseline-undici UPSTREAM');

let stop: () => Promise<void>;
let url: string;
if (kind === 'baseline' || kind === 'baseline-undici') {
  const served = await (kind === 'baseline' ? startBaselineProxy : startUndiciBaselineProxy)(upstream);
  url = served.url;
  stop = () => served.close();
} else {
  const controller = new AbortController();
  let listening: (url: string) => void = () => undefined;
  const started = new Promise<string>((resolve) => (listening = resolve));
  const io = {
    stdout: process.stdout,
    stderr: {
      write(text: string) {
        if (text.includes('"event":"listening"')) listening((JSON.parse(text) as { url: string }).url);
        return process.stderr.write(text);
      },
    },
    stdin: process.stdin,
    env: {},
    cwd: process.cwd(),
    signal: controller.signal,
  };
  // `unstuck-generic`: the Anthropic wire routed to one origin, everything else to another (the same
  // server by another name), so the proxy runs on its generic path rather than the native server.
  const upstreams =
    kind === 'unstuck-generic'
      ? ['--upstream', `anthropic=${upstream}`, '--upstream', upstream.replace('127.0.0.1', 'localhost')]
      : ['--upstream', upstream];
  const exited = run(['proxy', ...upstreams, '--port', '0', '--profile', 'deepseek'], io);
  url = await started;
  stop = async () => {
    controller.abort();
    await exited;
  };
}
// Under callgrind_control (bench/http-callgrind.ts) valgrind sees a command only while this process runs code:
// a timer wakes an idle proxy now and then, so a `--zero` or `--dump` never waits for the next request.
const tickMs = Number(process.env.UNSTUCK_BENCH_TICK_MS ?? 0);
if (tickMs > 0) setInterval(() => undefined, tickMs);
process.on('message', (message) => {
  if (message === 'cpu') process.send?.(process.cpuUsage());
  if (message === 'stop') void stop().then(() => (tickMs > 0 ? process.exit(0) : process.disconnect()));
});
process.send?.({ url });
