import { setTimeout as delay } from 'node:timers/promises';
import type { ProfileName, Violation } from '../core/index.js';
import { isUnstuckError } from '../core/index.js';
import { toAnswer } from './completion.js';
import { listenOn } from './listen.js';
import type { Step } from './step.js';
import type { EmulatorWire, WireName, WireRoute } from './wire.js';
import { createAnthropicWire } from './wires/anthropic-wire.js';
import { createChatWire } from './wires/chat-wire.js';
import { json } from './wires/frames.js';
import { createGeminiWire } from './wires/gemini-wire.js';
import { createResponsesWire } from './wires/responses-wire.js';

export interface EmulatorOptions {
  /** Whose rules and error bodies the chat wire plays. Default `deepseek`. */
  profile?: ProfileName;
  /** Chat wire: thinking mode when the request does not say (`thinking: {type}` in the body wins). */
  thinking?: boolean;
  /** The wires served, each on its own paths. Default: all of them. */
  wires?: readonly WireName[];
  script?: Step[];
  /** Request bodies above this many bytes get a 413. Default 64 MiB. */
  maxBodyBytes?: number;
  /** Called after each request on a wire is answered (the CLI logs status and rule, never contents). */
  onRequest?: (request: EmulatedRequest) => void;
}

export interface EmulatedRequest {
  /** The wire the path belongs to. */
  wire: WireName;
  path: string;
  /** The parsed JSON body; `undefined` when the body was not JSON or too large. */
  // biome-ignore lint/suspicious/noExplicitAny: a recorded body is whatever the client sent; tests read any field of it
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

export const wireNames: readonly WireName[] = ['chat', 'anthropic', 'responses', 'gemini'];

const MODEL_PATHS = new Set(['/v1/models', '/models']);
const DEFAULT_MAX_BODY = 64 * 1024 * 1024;
const DEFAULT_CHUNK_SIZE = 16;

/**
 * A strict provider on loopback, for every wire in its table (OpenAI chat under a profile,
 * Anthropic Messages): each request is checked with the core at request scope and an invalid one
 * gets that provider's own 400; a valid one is answered from the script, whichever wire it came
 * on. See docs/decisions/agent-emulator.md and docs/decisions/emulator-wire-table.md.
 */
export function createEmulator(options: EmulatorOptions = {}): Emulator {
  const profile: ProfileName = options.profile ?? 'deepseek';
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const script: Step[] = [...(options.script ?? [])];
  const requests: EmulatedRequest[] = [];
  const served = new Set(options.wires ?? wireNames);
  const table: Record<WireName, EmulatorWire> = {
    chat: createChatWire({ profile, thinking: options.thinking }),
    anthropic: createAnthropicWire(),
    responses: createResponsesWire(),
    gemini: createGeminiWire(),
  };
  const wires = wireNames.filter((name) => served.has(name)).map((name) => table[name]);
  const chat = table.chat;
  let sequence = 0;

  function find(path: string): { wire: EmulatorWire; route: WireRoute } | undefined {
    for (const wire of wires) {
      const route = wire.route(path);
      if (route !== undefined) return { wire, route };
    }
    return undefined;
  }

  async function handle(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname.replace(/\/+$/, '');
    if (MODEL_PATHS.has(path) && served.has('chat')) {
      if (request.method !== 'GET')
        return chat.error(405, 'invalid-request', `Method ${request.method} not allowed on ${path}`);
      const model = profile === 'deepseek' ? 'deepseek-chat' : 'emulated-model';
      return json(200, {
        object: 'list',
        data: [{ id: model, object: 'model', created: 0, owned_by: 'unstuck-emulator' }],
      });
    }
    const found = find(path);
    if (found === undefined) {
      const known = wires.flatMap((wire) => wire.paths);
      return (wires[0] ?? chat).error(
        404,
        'not-found',
        `Unknown path ${path}: the emulator serves ${known.join(', ')}`,
      );
    }
    const { wire, route } = found;
    if (request.method !== 'POST')
      return (
        wire.notPost?.(request, route) ??
        wire.error(405, 'invalid-request', `Method ${request.method} not allowed on ${path}`)
      );

    const record = (entry: Omit<EmulatedRequest, 'path' | 'wire'>, response: Response): Response => {
      const recorded = { wire: wire.name, path, ...entry };
      requests.push(recorded);
      options.onRequest?.(recorded);
      return response;
    };
    const url = new URL(request.url);
    const refused = wire.checkHeaders(request.headers, url);
    if (refused !== undefined) return record({ body: undefined, violations: [], status: refused.status }, refused);
    const read = await readBody(request, maxBodyBytes);
    if (read.kind === 'too-large') {
      return record(
        { body: undefined, violations: [], status: 413 },
        wire.error(413, 'too-large', `Request body too large: the limit is ${maxBodyBytes} bytes`),
      );
    }
    if (read.kind === 'failed')
      return record(
        { body: undefined, violations: [], status: 400 },
        wire.error(400, 'invalid-request', `Could not read the request body: ${read.reason}`),
      );
    let body: unknown;
    try {
      body = JSON.parse(read.text);
    } catch (error) {
      return record({ body: undefined, violations: [], status: 400 }, wire.notJson((error as Error).message));
    }
    const checked = wire.check(body, route, url);
    if (checked.kind === 'shape') {
      return record(
        { body, violations: [], status: 400 },
        wire.error(400, 'invalid-request', checked.message, { param: checked.param ?? null }),
      );
    }
    const violations = checked.violations;
    // The wire's check accepted its shape: a JSON object of that wire's request.
    const fields = body as Record<string, unknown>;
    const first = violations[0];
    if (first !== undefined) {
      const answer = wire.violation(first);
      return record({ body, violations, status: answer.status }, answer);
    }
    if (route === 'count-tokens') return record({ body, violations, status: 200 }, wire.countTokens(fields, read.text));
    if (route === 'compact' && wire.compact !== undefined)
      return record({ body, violations, status: 200 }, wire.compact(fields, read.text));

    const step = script.shift() ?? {};
    sequence += 1;
    const fault = step.fault;
    if (fault !== undefined && 'status' in fault)
      return record({ body, violations, status: fault.status }, wire.fault(fault));
    if (fault !== undefined && 'stall' in fault) {
      try {
        await delay(fault.stall, undefined, { signal: request.signal });
      } catch {
        return record({ body, violations, status: 499 }, wire.error(499, 'client-closed', 'Client closed the request'));
      }
    }

    const answer = toAnswer(step, {
      sequence,
      model: typeof fields['model'] === 'string' ? fields['model'] : (wire.modelOf?.(url) ?? 'emulated-model'),
      promptChars: read.text.length,
      created: Math.floor(Date.now() / 1000),
      idStyle: wire.idStyle,
    });
    let rendered: ReturnType<EmulatorWire['answer']>;
    try {
      rendered = wire.answer(answer, {
        body: fields,
        step,
        chunkSize: step.stream?.chunkSize ?? DEFAULT_CHUNK_SIZE,
        url,
      });
    } catch (error) {
      if (!isUnstuckError(error)) throw error;
      return record({ body, violations, status: 500 }, wire.error(500, 'server', `emulator: ${error.message}`));
    }
    const disconnectAfter =
      fault !== undefined && 'disconnectAfterChunks' in fault ? fault.disconnectAfterChunks : undefined;
    if (fault !== undefined && 'overloadedAfterChunks' in fault) {
      if (rendered.kind === 'json')
        return record(
          { body, violations, status: wire.overloadedStatus },
          wire.fault({ status: wire.overloadedStatus }),
        );
      rendered = {
        ...rendered,
        frames: [
          ...rendered.frames.slice(0, fault.overloadedAfterChunks),
          wire.streamError('overloaded', 'Overloaded'),
        ],
      };
    }
    if (rendered.kind === 'json') {
      if (disconnectAfter !== undefined)
        return record({ body, violations, status: 200 }, brokenResponse(request.signal));
      return record({ body, violations, status: 200 }, json(200, rendered.body));
    }
    const stream = sseStream(rendered.frames, {
      delayMs: step.stream?.delayMs ?? 0,
      disconnectAfter,
      signal: request.signal,
    });
    return record(
      { body, violations, status: 200 },
      new Response(stream, {
        status: 200,
        headers: {
          'content-type': rendered.contentType ?? 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
        },
      }),
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
    listen: (listenOptions = {}) => listenOn(handle, listenOptions),
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

/** A 200 whose body breaks before its first byte: a dropped connection on a non-streaming request. */
function brokenResponse(signal: AbortSignal): Response {
  return new Response(sseStream([], { delayMs: 0, disconnectAfter: 0, signal }), {
    status: 200,
    headers: { 'content-type': 'application/json' },
  });
}

function sseStream(
  frames: readonly string[],
  options: { delayMs: number; disconnectAfter: number | undefined; signal: AbortSignal },
): ReadableStream<Uint8Array> {
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
      const next = frames[sent];
      sent += 1;
      if (next !== undefined) {
        controller.enqueue(encoder.encode(next));
        if (sent < frames.length) return;
      }
      closed = true;
      controller.close();
    },
    cancel() {
      closed = true;
    },
  });
}
