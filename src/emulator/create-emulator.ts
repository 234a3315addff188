import type { Message } from '../core/index.js';
import type { ProfileName, Violation } from '../core/index.js';
import { check, getProfile } from '../core/index.js';
import { toAnswer, toChunks, toCompletion } from './completion.js';
import { listenOn } from './listen.js';
import type { Step } from './step.js';
import { setTimeout as delay } from 'node:timers/promises';

export interface EmulatorOptions {
  /** Whose rules and error bodies the emulator plays. Default `deepseek`. */
  profile?: ProfileName;
  /** Thinking mode when the request does not say (`thinking: {type}` in the body wins). */
  thinking?: boolean;
  script?: Step[];
  /** Request bodies above this many bytes get a 413. Default 64 MiB. */
  maxBodyBytes?: number;
  /** Called after each chat request is answered (the CLI logs status and rule, never contents). */
  onRequest?: (request: EmulatedRequest) => void;
}

export interface EmulatedRequest {
  path: string;
  /** The parsed JSON body; `undefined` when the body was not JSON or too large. */
  body: any;
  violations: Violation[];
  status: number;
}

export interface Emulator {
  /** Fetch-style and in-process: no socket. */
  handle(request: Request): Promise<Response>;
  /** `handle` shaped as `fetch`, for clients that take a `fetch` option (aborts reject like fetch). */
  fetch: typeof fetch;
  listen(options?: { port?: number; host?: string }): Promise<{ url: string; close(): Promise<void> }>;
  readonly requests: ReadonlyArray<EmulatedRequest>;
  /** Appends steps to the script. */
  push(...steps: Step[]): void;
}

const CHAT_PATHS = new Set(['/v1/chat/completions', '/chat/completions']);
const MODEL_PATHS = new Set(['/v1/models', '/models']);
const DEFAULT_MAX_BODY = 64 * 1024 * 1024;
const DEFAULT_CHUNK_SIZE = 16;

/**
 * A strict OpenAI-compatible provider on loopback: every chat request is checked with the core
 * under the profile's rules (`scope: 'request'`) and an invalid one gets that provider's own 400;
 * a valid one is answered from the script. See docs/decisions/agent-emulator.md.
 */
export function createEmulator(options: EmulatorOptions = {}): Emulator {
  const profile: ProfileName = options.profile ?? 'deepseek';
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const script: Step[] = [...(options.script ?? [])];
  const requests: EmulatedRequest[] = [];
  let sequence = 0;

  async function handle(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname.replace(/\/+$/, '');
    if (MODEL_PATHS.has(path)) {
      if (request.method !== 'GET') return errorResponse(405, `Method ${request.method} not allowed on ${path}`, 'invalid_request_error');
      const model = profile === 'deepseek' ? 'deepseek-chat' : 'emulated-model';
      return json(200, { object: 'list', data: [{ id: model, object: 'model', created: 0, owned_by: 'unstuck-emulator' }] });
    }
    if (!CHAT_PATHS.has(path)) return errorResponse(404, `Unknown path ${path}: the emulator serves POST /v1/chat/completions and GET /v1/models`, 'invalid_request_error');
    if (request.method !== 'POST') return errorResponse(405, `Method ${request.method} not allowed on ${path}`, 'invalid_request_error');

    const record = (entry: Omit<EmulatedRequest, 'path'>, response: Response): Response => {
      const recorded = { path, ...entry };
      requests.push(recorded);
      options.onRequest?.(recorded);
      return response;
    };
    const read = await readBody(request, maxBodyBytes);
    if (read.kind === 'too-large') {
      return record({ body: undefined, violations: [], status: 413 }, errorResponse(413, `Request body too large: the limit is ${maxBodyBytes} bytes`, 'invalid_request_error'));
    }
    if (read.kind === 'failed') return record({ body: undefined, violations: [], status: 400 }, errorResponse(400, `Could not read the request body: ${read.reason}`, 'invalid_request_error'));
    let body: any;
    try {
      body = JSON.parse(read.text);
    } catch (error) {
      return record({ body: undefined, violations: [], status: 400 }, notJson(profile, (error as Error).message));
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body) || !Array.isArray(body.messages)) {
      const got = body === null || typeof body !== 'object' || Array.isArray(body) ? 'a body that is not a JSON object' : "no 'messages' array";
      return record({ body, violations: [], status: 400 }, errorResponse(400, `Invalid request: expected a JSON object with a 'messages' array, got ${got}`, 'invalid_request_error', 'messages'));
    }

    const thinkingType: unknown = body.thinking?.type;
    const thinking = thinkingType === 'enabled' ? true : thinkingType === 'disabled' ? false : options.thinking;
    const checkOptions: { profile: ProfileName; scope: 'request'; model?: string; thinking?: boolean } = { profile, scope: 'request' };
    if (typeof body.model === 'string') checkOptions.model = body.model;
    if (thinking !== undefined) checkOptions.thinking = thinking;
    const violations = check(body.messages as Message[], checkOptions);
    const first = violations[0];
    if (first !== undefined) {
      const answer = getProfile(profile).errorResponse(first);
      return record({ body, violations, status: answer.status }, json(answer.status, answer.body));
    }

    const step = script.shift() ?? {};
    sequence += 1;
    const fault = step.fault;
    if (fault !== undefined && 'status' in fault) {
      const headers: Record<string, string> = {};
      if (fault.status === 429 && fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
      const text = fault.status === 429 ? 'Rate limit reached: too many requests, slow down' : fault.status === 500 ? 'The server had an error while processing your request' : 'The server is overloaded or not ready yet';
      const type = fault.status === 429 ? 'rate_limit_error' : 'server_error';
      return record({ body, violations, status: fault.status }, errorResponse(fault.status, text, type, null, headers));
    }
    if (fault !== undefined && 'stall' in fault) {
      try {
        await delay(fault.stall, undefined, { signal: request.signal });
      } catch {
        return record({ body, violations, status: 499 }, errorResponse(499, 'Client closed the request', 'invalid_request_error'));
      }
    }

    const answer = toAnswer(step, {
      sequence,
      model: typeof body.model === 'string' ? body.model : 'emulated-model',
      promptChars: read.text.length,
      created: Math.floor(Date.now() / 1000),
      idStyle: profile === 'mistral' ? 'mistral' : 'call',
    });
    const disconnectAfter = fault !== undefined && 'disconnectAfterChunks' in fault ? fault.disconnectAfterChunks : undefined;
    if (body.stream !== true) {
      if (disconnectAfter !== undefined) return record({ body, violations, status: 200 }, brokenResponse(request.signal));
      return record({ body, violations, status: 200 }, json(200, toCompletion(answer)));
    }
    const usage = profile === 'deepseek' ? 'on-finish' : body.stream_options?.include_usage === true ? 'separate' : 'none';
    const chunks = toChunks(answer, { chunkSize: step.stream?.chunkSize ?? DEFAULT_CHUNK_SIZE, usage });
    const stream = sseStream(chunks, { delayMs: step.stream?.delayMs ?? 0, disconnectAfter, signal: request.signal });
    return record(
      { body, violations, status: 200 },
      new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' } }),
    );
  }

  const emulatorFetch = (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const signal = request.signal;
    signal.throwIfAborted();
    return await new Promise<Response>((resolve, reject) => {
      const onAbort = (): void => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      handle(request).then(
        (response) => {
          signal.removeEventListener('abort', onAbort);
          resolve(response);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }) as typeof fetch;

  return {
    handle,
    fetch: emulatorFetch,
    listen: (listenOptions = {}) => listenOn(handle, { port: listenOptions.port ?? 0, host: listenOptions.host ?? '127.0.0.1' }),
    get requests() {
      return requests;
    },
    push: (...steps) => {
      script.push(...steps);
    },
  };
}

type ReadResult = { kind: 'ok'; text: string } | { kind: 'too-large' } | { kind: 'failed'; reason: string };

/** Reads the body, stopping as soon as it passes the limit (a declared Content-Length is checked first). */
async function readBody(request: Request, limit: number): Promise<ReadResult> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limit) return { kind: 'too-large' };
  if (request.body === null) return { kind: 'ok', text: '' };
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel().catch(() => undefined);
        return { kind: 'too-large' };
      }
      parts.push(value);
    }
  } catch (error) {
    return { kind: 'failed', reason: error instanceof Error ? error.message : String(error) };
  }
  try {
    return { kind: 'ok', text: new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(parts)) };
  } catch {
    return { kind: 'failed', reason: 'the body is not valid UTF-8' };
  }
}

/**
 * A body that is not JSON. DeepSeek runs on axum, whose JSON extractor answers a syntax error with
 * "Failed to parse the request body as JSON: ..." (inferred from the axum-style deserialize error
 * in rules.json deepseek/role-unknown); OpenAI answers with its own "could not parse" text.
 */
function notJson(profile: ProfileName, reason: string): Response {
  if (profile === 'deepseek') return errorResponse(400, `Failed to parse the request body as JSON: ${reason}`, 'invalid_request_error');
  return errorResponse(
    400,
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP client correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
    'invalid_request_error',
  );
}

function errorResponse(status: number, message: string, type: string, param: string | null = null, headers: Record<string, string> = {}): Response {
  return json(status, { error: { message, type, param, code: null } }, headers);
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

/** A 200 whose body breaks before its first byte: a dropped connection on a non-streaming request. */
function brokenResponse(signal: AbortSignal): Response {
  return new Response(sseStream([], { delayMs: 0, disconnectAfter: 0, signal }), { status: 200, headers: { 'content-type': 'application/json' } });
}

function sseStream(chunks: readonly unknown[], options: { delayMs: number; disconnectAfter: number | undefined; signal: AbortSignal }): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let sent = 0;
  let closed = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      options.signal.addEventListener(
        'abort',
        () => {
          if (closed) return;
          closed = true;
          controller.error(options.signal.reason);
        },
        { once: true },
      );
    },
    async pull(controller) {
      if (closed) return;
      if (options.disconnectAfter !== undefined && sent >= options.disconnectAfter) {
        closed = true;
        controller.error(new TypeError('emulator: the connection dropped mid-stream (scripted fault)'));
        return;
      }
      if (sent > 0 && options.delayMs > 0) {
        try {
          await delay(options.delayMs, undefined, { signal: options.signal });
        } catch {
          return;
        }
        if (closed) return;
      }
      const next = chunks[sent];
      sent += 1;
      if (next !== undefined) {
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(next)}\n\n`));
        return;
      }
      controller.enqueue(encoder.encode('data: [DONE]\n\n'));
      closed = true;
      controller.close();
    },
    cancel() {
      closed = true;
    },
  });
}

