import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

/** Shared by the http bench and the load script: a minimal upstream, a baseline proxy, bodies, a keep-alive client. */

export interface Served {
  url: string;
  close(): Promise<void>;
}

async function listen(server: ReturnType<typeof createServer>): Promise<Served> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}

const COMPLETION = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 0,
  model: 'bench',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
});

/**
 * The fastest upstream we can write: reads the body, answers a fixed completion; with
 * `stream: true` in the URL query (`?sse=1`) it sends one SSE event at once and the rest after
 * `sseGapMs`, so the time to the first byte can be measured.
 */
export function startUpstream(options: { sseGapMs?: number } = {}): Promise<Served> {
  const server = createServer((incoming, outgoing) => {
    incoming.resume();
    incoming.on('end', () => {
      if (incoming.url?.includes('/v1/messages') === true) return answerAnthropic(incoming.url, outgoing, options);
      if (incoming.url?.includes('alt=sse') === true) {
        // Gemini's `:streamGenerateContent?alt=sse`: one candidate chunk at once, the last after the gap.
        outgoing.writeHead(200, { 'content-type': 'text/event-stream' });
        outgoing.write(
          'data: {"candidates":[{"content":{"parts":[{"text":"first"}],"role":"model"},"index":0}]}\r\n\r\n',
        );
        const last =
          '{"candidates":[{"content":{"parts":[{"text":"."}],"role":"model"},"finishReason":"STOP","index":0}]}';
        setTimeout(() => outgoing.end(`data: ${last}\r\n\r\n`), options.sseGapMs ?? 20);
        return;
      }
      if (incoming.url?.includes('sse=1')) {
        outgoing.writeHead(200, { 'content-type': 'text/event-stream' });
        outgoing.write('data: {"choices":[{"delta":{"content":"first"}}]}\n\n');
        setTimeout(() => outgoing.end('data: [DONE]\n\n'), options.sseGapMs ?? 20);
        return;
      }
      outgoing.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(COMPLETION) });
      outgoing.end(COMPLETION);
    });
  });
  return listen(server);
}

const ANTHROPIC_MESSAGE = JSON.stringify({
  id: 'msg_bench',
  type: 'message',
  role: 'assistant',
  model: 'bench',
  content: [{ type: 'text', text: 'ok' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 },
});

/** The Anthropic wire's answer: a message, or with `sse=1` its events, `message_start` at once and the rest after the gap. */
function answerAnthropic(url: string, outgoing: ServerResponse, options: { sseGapMs?: number }): void {
  if (!url.includes('sse=1')) {
    outgoing.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(ANTHROPIC_MESSAGE),
    });
    outgoing.end(ANTHROPIC_MESSAGE);
    return;
  }
  const event = (type: string, data: unknown): string =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...(data as object) })}\n\n`;
  outgoing.writeHead(200, { 'content-type': 'text/event-stream' });
  outgoing.write(event('message_start', { message: { ...JSON.parse(ANTHROPIC_MESSAGE), content: [] } }));
  setTimeout(() => {
    outgoing.write(event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
    outgoing.write(event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'ok' } }));
    outgoing.write(event('content_block_stop', { index: 0 }));
    outgoing.write(event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } }));
    outgoing.end(event('message_stop', {}));
  }, options.sseGapMs ?? 20);
}

/** The baseline: a minimal Node pass-through proxy (pipe in, pipe out, keep-alive to the upstream, no parsing). */
export function startBaselineProxy(upstream: string): Promise<Served> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const server = createServer((incoming, outgoing) => {
    const headers = { ...incoming.headers };
    delete headers.host;
    delete headers.connection;
    const forwarded = httpRequest(
      { host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers, agent },
      (response) => {
        outgoing.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(outgoing);
      },
    );
    forwarded.on('error', () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  return listen(server);
}

/**
 * A second pass-through, for context only: the same minimal proxy with undici's `Pool.dispatch` as
 * its upstream client (what `unstuck proxy` uses), so the cost of the repair itself shows apart
 * from the choice of HTTP client. Hop-by-hop headers dropped, nothing parsed.
 */
export function startUndiciBaselineProxy(upstream: string): Promise<Served> {
  const pool = new Pool(upstream, { connections: 256 });
  const dropped = new Set([
    'connection',
    'keep-alive',
    'transfer-encoding',
    'host',
    'content-length',
    'expect',
    'upgrade',
  ]);
  const server = createServer({ noDelay: true }, (incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const headers: string[] = [];
      const raw = incoming.rawHeaders;
      for (let index = 0; index + 1 < raw.length; index += 2) {
        const name = (raw[index] as string).toLowerCase();
        if (!dropped.has(name)) headers.push(name, raw[index + 1] as string);
      }
      let resume: (() => void) | undefined;
      outgoing.on('drain', () => resume?.());
      pool.dispatch(
        {
          path: incoming.url ?? '/',
          method: (incoming.method ?? 'GET') as 'POST',
          headers,
          body: Buffer.concat(chunks),
        },
        {
          onConnect: () => undefined,
          onHeaders(status, rawHeaders, resumeRead, statusText) {
            resume = resumeRead;
            const forwarded: string[] = [];
            for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
              const name = (rawHeaders[index] as Buffer).toString('latin1').toLowerCase();
              if (!dropped.has(name) || name === 'content-length')
                forwarded.push(name, (rawHeaders[index + 1] as Buffer).toString('latin1'));
            }
            outgoing.writeHead(status, statusText, forwarded);
            return true;
          },
          onData: (chunk) => outgoing.write(chunk),
          onComplete: () => outgoing.end(),
          onError: (error) => outgoing.destroy(error),
        },
      );
    });
  });
  return listen(server);
}

/** A 10-message tool-calling history: the common small request. */
export function smallBody(): string {
  const messages: unknown[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Fix the failing test in src/app.ts' },
  ];
  for (let turn = 0; turn < 4; turn += 1) {
    const id = `call_${turn}`;
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id, type: 'function', function: { name: 'read_file', arguments: `{"path":"src/file-${turn}.ts"}` } },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: id, content: `export const value${turn} = ${turn};\n` });
  }
  return JSON.stringify({ model: 'deepseek-chat', messages: messages.slice(0, 10) });
}

/** A long agent session of about 1 MB (the size of NexForgeCLI's session-122357): many read/edit tool turns. */
export function largeBody(targetBytes = 1_000_000): string {
  const messages: unknown[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Refactor the whole project.' },
  ];
  const file = 'export function compute(input: number): number {\n  return input * 2 + 1;\n}\n'.repeat(12);
  let size = 0;
  for (let turn = 0; size < targetBytes; turn += 1) {
    const id = `call_${turn}`;
    const call = {
      role: 'assistant',
      content: `Reading file ${turn}.`,
      tool_calls: [
        { id, type: 'function', function: { name: 'read_file', arguments: `{"path":"src/module-${turn}.ts"}` } },
      ],
    };
    const result = { role: 'tool', tool_call_id: id, content: file };
    messages.push(call, result);
    size += JSON.stringify(call).length + JSON.stringify(result).length;
  }
  messages.push({ role: 'user', content: 'Continue.' });
  return JSON.stringify({ model: 'deepseek-chat', messages });
}

const FILE = 'export function compute(input: number): number {\n  return input * 2 + 1;\n}\n'.repeat(12);

/** A Claude Code-like tool loop, valid as sent: a question, then `turns` tool_use / tool_result pairs. */
export function anthropicBody(options: { turns?: number; bytes?: number }): string {
  const messages: unknown[] = [{ role: 'user', content: 'Fix the failing test in src/app.ts' }];
  let size = 0;
  for (let turn = 0; turn < (options.turns ?? Infinity) && size < (options.bytes ?? Infinity); turn += 1) {
    const id = `toolu_${String(turn).padStart(4, '0')}`;
    const call = {
      role: 'assistant',
      content: [
        { type: 'text', text: `Reading file ${turn}.` },
        { type: 'tool_use', id, name: 'Read', input: { file_path: `src/module-${turn}.ts` } },
      ],
    };
    const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: FILE }] };
    messages.push(call, result);
    size += JSON.stringify(call).length + JSON.stringify(result).length;
  }
  return JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages });
}

/** A Codex-like Responses tool loop, valid as sent: a question, then `turns` function_call / function_call_output pairs. */
export function responsesBody(options: { turns?: number; bytes?: number }): string {
  const input: unknown[] = [
    { role: 'user', content: [{ type: 'input_text', text: 'Fix the failing test in src/app.ts' }] },
  ];
  let size = 0;
  for (let turn = 0; turn < (options.turns ?? Infinity) && size < (options.bytes ?? Infinity); turn += 1) {
    const callId = `call_${String(turn).padStart(4, '0')}`;
    const call = {
      type: 'function_call',
      id: `fc_${String(turn).padStart(4, '0')}`,
      call_id: callId,
      name: 'exec_command',
      arguments: JSON.stringify({ cmd: `cat src/module-${turn}.ts` }),
    };
    const output = { type: 'function_call_output', call_id: callId, output: FILE };
    input.push(call, output);
    size += JSON.stringify(call).length + JSON.stringify(output).length;
  }
  return JSON.stringify({ model: 'gpt-5-codex', input });
}

/** A Gemini CLI-like tool loop, valid as sent: a question, then `turns` functionCall / functionResponse turns. */
export function geminiBody(options: { turns?: number; bytes?: number }): string {
  const contents: unknown[] = [{ role: 'user', parts: [{ text: 'Fix the failing test in src/app.ts' }] }];
  let size = 0;
  for (let turn = 0; turn < (options.turns ?? Infinity) && size < (options.bytes ?? Infinity); turn += 1) {
    const call = {
      role: 'model',
      parts: [{ functionCall: { name: 'read_file', args: { absolute_path: `src/module-${turn}.ts` } } }],
    };
    const answer = {
      role: 'user',
      parts: [{ functionResponse: { name: 'read_file', response: { output: FILE } } }],
    };
    contents.push(call, answer);
    size += JSON.stringify(call).length + JSON.stringify(answer).length;
  }
  return JSON.stringify({ contents });
}

const clientAgent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One POST on a keep-alive socket; resolves with [ms to the first body byte, ms to the end]. */
export function timedPost(url: string, body: string): Promise<[number, number]> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let first = -1;
    const request = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        agent: clientAgent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          authorization: 'Bearer sk-bench',
        },
      },
      (response) => {
        response.on('data', () => {
          if (first < 0) first = performance.now() - started;
        });
        response.on('end', () => resolve([first, performance.now() - started]));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}
