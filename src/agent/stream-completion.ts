import type { EventSourceMessage } from 'eventsource-parser';
import { createParser } from 'eventsource-parser';
import type { Message, ToolCall } from '../core/index.js';
import { isPermanentConnectFailure, parseRetryAfter, WireError } from './wire-error.js';

export interface CompletionRequest {
  url: string;
  apiKey: string;
  body: Record<string, unknown>;
  fetch: typeof fetch;
  signal: AbortSignal;
  idleTimeoutMs: number;
}

export type CompletionDelta = { type: 'text'; text: string } | { type: 'reasoning'; text: string };

export interface Completion {
  text: string;
  reasoning: string | undefined;
  toolCalls: { id: string | undefined; name: string; arguments: string }[];
  finishReason: string | undefined;
  usage: { promptTokens: number; completionTokens: number } | undefined;
}

/**
 * One chat-completions request. Yields text and reasoning deltas as they arrive, returns the whole
 * answer, throws `WireError` on any failure. SSE is parsed by eventsource-parser; a stall (no byte
 * for `idleTimeoutMs`) aborts the request as a timeout. Retrying is the caller's job: this is the
 * single layer that talks to the wire, and it never retries.
 */
export async function* streamCompletion(request: CompletionRequest): AsyncGenerator<CompletionDelta, Completion> {
  const controller = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`no data for ${request.idleTimeoutMs} ms`));
    }, request.idleTimeoutMs);
  };
  const onAbort = (): void => controller.abort(request.signal.reason);
  if (request.signal.aborted) throw new WireError({ kind: 'aborted' });
  request.signal.addEventListener('abort', onAbort, { once: true });
  const fail = (error: unknown): WireError => {
    if (error instanceof WireError) return error;
    if (request.signal.aborted) return new WireError({ kind: 'aborted' });
    if (timedOut) return new WireError({ kind: 'timeout', detail: `no data for ${request.idleTimeoutMs} ms` });
    return new WireError(
      isPermanentConnectFailure(error, request.url)
        ? { kind: 'network', detail: causeText(error), permanent: true }
        : { kind: 'network', detail: causeText(error) },
    );
  };
  arm();
  try {
    let response: Response;
    try {
      response = await request.fetch(request.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: request.body['stream'] === true ? 'text/event-stream' : 'application/json',
          authorization: `Bearer ${request.apiKey}`,
        },
        body: JSON.stringify(request.body),
        signal: controller.signal,
      });
    } catch (error) {
      throw fail(error);
    }
    arm();
    if (!response.ok) {
      let text = '';
      try {
        text = await response.text();
      } catch (error) {
        throw fail(error);
      }
      const failure: { kind: 'http'; status: number; body: unknown; retryAfterMs?: number } = {
        kind: 'http',
        status: response.status,
        body: parseMaybe(text),
      };
      const retryAfter = parseRetryAfter(response.headers.get('retry-after'), Date.now());
      if (retryAfter !== undefined) failure.retryAfterMs = retryAfter;
      throw new WireError(failure);
    }
    if (
      request.body['stream'] !== true ||
      !(response.headers.get('content-type') ?? '').includes('text/event-stream')
    ) {
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        throw fail(error);
      }
      const completion = fromCompletionBody(parseMaybe(text));
      if (completion.reasoning !== undefined && completion.reasoning !== '')
        yield { type: 'reasoning', text: completion.reasoning };
      if (completion.text !== '') yield { type: 'text', text: completion.text };
      return completion;
    }
    return yield* readStream(response, arm, fail, controller.signal);
  } finally {
    clearTimeout(timer);
    request.signal.removeEventListener('abort', onAbort);
    if (!controller.signal.aborted) controller.abort(new Error('request finished'));
  }
}

async function* readStream(
  response: Response,
  arm: () => void,
  fail: (error: unknown) => WireError,
  signal: AbortSignal,
): AsyncGenerator<CompletionDelta, Completion> {
  const completion: Completion = {
    text: '',
    reasoning: undefined,
    toolCalls: [],
    finishReason: undefined,
    usage: undefined,
  };
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  const decoder = new TextDecoder();
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  // Not every fetch ties the body to its signal once headers are in (an in-process one may not):
  // cancel the reader ourselves, so a stall or an abort ends a pending read at once.
  const onAbort = (): void => void reader.cancel(signal.reason).catch(() => undefined);
  signal.addEventListener('abort', onAbort, { once: true });
  let done = false;
  try {
    while (!done) {
      let read: Awaited<ReturnType<typeof reader.read>>;
      try {
        read = await reader.read();
      } catch (error) {
        throw fail(error);
      }
      if (read.done) {
        if (signal.aborted) throw fail(signal.reason);
        break;
      }
      arm();
      parser.feed(decoder.decode(read.value, { stream: true }));
      for (const event of pending.splice(0)) {
        if (event.data === '[DONE]') {
          done = true;
          break;
        }
        const delta = applyChunk(completion, parseMaybe(event.data));
        if (delta.reasoning !== '') yield { type: 'reasoning', text: delta.reasoning };
        if (delta.text !== '') yield { type: 'text', text: delta.text };
      }
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    reader.cancel().catch(() => undefined);
  }
  if (!done && completion.finishReason === undefined)
    throw new WireError({ kind: 'network', detail: 'the stream ended before the answer was complete' });
  return completion;
}

/** Folds one `chat.completion.chunk` into the answer; returns the text it added. */
function applyChunk(completion: Completion, chunk: unknown): { text: string; reasoning: string } {
  if (chunk === null || typeof chunk !== 'object')
    throw new WireError({ kind: 'protocol', detail: 'an SSE event that is not a JSON object' });
  const record = chunk as { error?: unknown; choices?: unknown; usage?: unknown };
  if (record.error !== undefined) throw new WireError({ kind: 'http', status: 500, body: { error: record.error } });
  readUsage(completion, record.usage);
  const choice = Array.isArray(record.choices)
    ? (record.choices[0] as { delta?: Record<string, unknown>; finish_reason?: unknown } | undefined)
    : undefined;
  if (choice === undefined) return { text: '', reasoning: '' };
  if (typeof choice.finish_reason === 'string') completion.finishReason = choice.finish_reason;
  const delta = choice.delta ?? {};
  const text = typeof delta['content'] === 'string' ? delta['content'] : '';
  const reasoning = typeof delta['reasoning_content'] === 'string' ? delta['reasoning_content'] : '';
  completion.text += text;
  if (reasoning !== '' || (typeof delta['reasoning_content'] === 'string' && completion.reasoning === undefined))
    completion.reasoning = (completion.reasoning ?? '') + reasoning;
  if (Array.isArray(delta['tool_calls'])) {
    for (const part of delta['tool_calls'] as {
      index?: unknown;
      id?: unknown;
      function?: { name?: unknown; arguments?: unknown };
    }[]) {
      const index = typeof part.index === 'number' ? part.index : completion.toolCalls.length;
      completion.toolCalls[index] ??= { id: undefined, name: '', arguments: '' };
      const call = completion.toolCalls[index]!;
      if (typeof part.id === 'string' && part.id !== '') call.id = part.id;
      if (typeof part.function?.name === 'string' && part.function.name !== '') call.name = part.function.name;
      if (typeof part.function?.arguments === 'string') call.arguments += part.function.arguments;
    }
  }
  return { text, reasoning };
}

function fromCompletionBody(body: unknown): Completion {
  const choice = (body as { choices?: { message?: Message; finish_reason?: unknown }[] } | null)?.choices?.[0];
  const message = choice?.message;
  if (message === undefined || message === null || typeof message !== 'object')
    throw new WireError({ kind: 'protocol', detail: 'the answer has no choices[0].message' });
  const completion: Completion = {
    text: typeof message.content === 'string' ? message.content : '',
    reasoning: typeof message.reasoning_content === 'string' ? message.reasoning_content : undefined,
    toolCalls: (message.tool_calls ?? []).map((call: ToolCall) => ({
      id: typeof call.id === 'string' ? call.id : undefined,
      name: typeof call.function?.name === 'string' ? call.function.name : '',
      arguments: typeof call.function?.arguments === 'string' ? call.function.arguments : '',
    })),
    finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : undefined,
    usage: undefined,
  };
  readUsage(completion, (body as { usage?: unknown }).usage);
  return completion;
}

function readUsage(completion: Completion, usage: unknown): void {
  if (usage === null || typeof usage !== 'object') return;
  const record = usage as { prompt_tokens?: unknown; completion_tokens?: unknown };
  if (typeof record.prompt_tokens === 'number' && typeof record.completion_tokens === 'number') {
    completion.usage = { promptTokens: record.prompt_tokens, completionTokens: record.completion_tokens };
  }
}

function parseMaybe(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function causeText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
