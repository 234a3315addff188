/**
 * Load test on loopback (not part of `npm test` or `npm run bench`): `npm run load`.
 * 64 concurrent connections for 30 s through a real `unstuck proxy` process to the strict
 * emulator, on all four wires (chat completions; Anthropic Messages as Claude Code sends them,
 * `/v1/messages?beta=true`; OpenAI Responses as Codex does, `/v1/responses`; Gemini as Gemini CLI
 * does, `:generateContent` and `:streamGenerateContent?alt=sse`, the key in `x-goog-api-key` or
 * `?key=`); half the requests carry a broken history the proxy must repair, half stream.
 * Passes (exit 0) when there are 0 errors, 0 timeouts, 0 non-2xx answers and the emulator saw
 * only valid requests.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { createEmulator } from '../src/emulator/index.js';

const seconds = Number(process.env.UNSTUCK_LOAD_SECONDS ?? 30);
const emulator = createEmulator({ profile: 'openai' });
const upstream = await emulator.listen();
const child = spawn(
  process.execPath,
  ['--import', 'tsx', 'src/cli/main.ts', 'proxy', '--upstream', upstream.url, '--port', '0', '--profile', 'openai'],
  { cwd: join(import.meta.dirname, '..'), stdio: ['ignore', 'ignore', 'pipe'] },
);
let logLines = 0;
const proxyUrl = await new Promise<string>((resolve, reject) => {
  let pending = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (line.includes('"listening"')) resolve((JSON.parse(line) as { url: string }).url);
      else logLines += 1;
    }
  });
  child.once('exit', (code) => reject(new Error(`unstuck proxy exited with ${code}`)));
});

const valid = [
  { role: 'user', content: 'hi' },
  { role: 'assistant', content: 'hello' },
  { role: 'user', content: 'again' },
];
const broken = [
  { role: 'user', content: 'weather?' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{}' } }],
  },
  { role: 'user', content: 'never mind' },
];
const bodies = [
  JSON.stringify({ model: 'gpt-4o', messages: valid }),
  JSON.stringify({ model: 'gpt-4o', messages: broken }),
  JSON.stringify({ model: 'gpt-4o', messages: broken, stream: true }),
  JSON.stringify({ model: 'gpt-4o', messages: valid, stream: true }),
];

const toolUse = { type: 'tool_use', id: 'toolu_01', name: 'Read', input: { file_path: '/a.txt' } };
const anthropicValid = [
  { role: 'user', content: 'read /a.txt' },
  { role: 'assistant', content: [toolUse] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'hello' }] },
];
const anthropicBroken = [
  { role: 'user', content: 'read /a.txt' },
  { role: 'assistant', content: [{ type: 'text', text: ' \n' }, toolUse] },
  { role: 'user', content: 'never mind' },
];
const anthropicBodies = [
  { model: 'claude-sonnet-4-5', max_tokens: 64, messages: anthropicValid },
  { model: 'claude-sonnet-4-5', max_tokens: 64, messages: anthropicBroken },
  { model: 'claude-sonnet-4-5', max_tokens: 64, messages: anthropicBroken, stream: true },
  { model: 'claude-sonnet-4-5', max_tokens: 64, messages: anthropicValid, stream: true },
].map((body) => JSON.stringify(body));

const functionCall = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'exec_command', arguments: '{}' };
const responsesValid = [
  { role: 'user', content: 'list the files' },
  functionCall,
  { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' },
];
const responsesBroken = [{ role: 'user', content: 'list the files' }, functionCall, { role: 'user', content: 'stop' }];
const responsesBodies = [
  { model: 'gpt-5-codex', input: responsesValid },
  { model: 'gpt-5-codex', input: responsesBroken },
  { model: 'gpt-5-codex', input: responsesBroken, stream: true },
  { model: 'gpt-5-codex', input: responsesValid, stream: true },
].map((body) => JSON.stringify(body));

const ask = { role: 'user', parts: [{ text: 'read notes.md' }] };
const geminiCall = { role: 'model', parts: [{ functionCall: { name: 'read_file', args: { path: 'notes.md' } } }] };
const geminiResponse = {
  role: 'user',
  parts: [{ functionResponse: { name: 'read_file', response: { output: '42' } } }],
};
const geminiValid = JSON.stringify({ contents: [ask, geminiCall, geminiResponse] });
const geminiBroken = JSON.stringify({ contents: [ask, geminiCall, ask] });
const GEMINI = '/v1beta/models/gemini-2.5-pro';
const geminiRequests: [string, Record<string, string>, string][] = [
  [`${GEMINI}:generateContent`, { 'x-goog-api-key': 'AIza-load' }, geminiValid],
  [`${GEMINI}:generateContent?key=AIza-load`, {}, geminiBroken],
  [`${GEMINI}:streamGenerateContent?alt=sse`, { 'x-goog-api-key': 'AIza-load' }, geminiBroken],
  [`${GEMINI}:streamGenerateContent?alt=sse&key=AIza-load`, {}, geminiValid],
];

const result = await autocannon({
  url: `${proxyUrl}/v1/chat/completions`,
  connections: 64,
  duration: seconds,
  requests: [
    ...bodies.map((body) => ({
      method: 'POST' as const,
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-load' },
      body,
    })),
    ...anthropicBodies.map((body) => ({
      method: 'POST' as const,
      path: '/v1/messages?beta=true',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-load', 'anthropic-version': '2023-06-01' },
      body,
    })),
    ...responsesBodies.map((body) => ({
      method: 'POST' as const,
      path: '/v1/responses',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-load' },
      body,
    })),
    ...geminiRequests.map(([path, headers, body]) => ({
      method: 'POST' as const,
      path,
      headers: { 'content-type': 'application/json', ...headers },
      body,
    })),
  ],
});
const invalid = emulator.requests.filter((request) => request.violations.length > 0).length;
const byWire = (wire: string): number => emulator.requests.filter((request) => request.wire === wire).length;
console.log(
  `load: 64 connections, ${seconds} s: ${result.requests.total} requests, ${result.requests.average.toFixed(0)} req/s, latency p50 ${result.latency.p50} ms p99 ${result.latency.p99} ms, errors ${result.errors}, timeouts ${result.timeouts}, non-2xx ${result.non2xx}, invalid requests seen upstream ${invalid} (of ${byWire('chat')} chat, ${byWire('anthropic')} anthropic, ${byWire('responses')} responses, ${byWire('gemini')} gemini), log lines ${logLines}`,
);
const exited = new Promise((resolve) => child.once('exit', resolve));
child.kill('SIGTERM');
await exited;
await upstream.close();
process.exitCode =
  result.errors === 0 &&
  result.timeouts === 0 &&
  result.non2xx === 0 &&
  invalid === 0 &&
  ['anthropic', 'responses', 'gemini'].every((wire) => byWire(wire) > 0)
    ? 0
    : 1;
