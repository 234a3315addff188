import type { Violation } from '../../core/index.js';
import { check, UnstuckError } from '../../core/index.js';
import type { Answer } from '../completion.js';
import type { Step } from '../step.js';
import type { EmulatorWire, ErrorKind, WireCheck } from '../wire.js';
import { isObject, json } from './frames.js';

/** `…/models/{model}:{method}` under any version prefix (`/v1beta`, `/v1`), as the Gemini API and its SDKs spell it. */
const PATH = /\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;

/** google.rpc.Code names by kind (https://ai.google.dev/gemini-api/docs/troubleshooting#error-codes). */
const STATUSES: Record<ErrorKind, string> = {
  'invalid-request': 'INVALID_ARGUMENT',
  authentication: 'PERMISSION_DENIED',
  'not-found': 'NOT_FOUND',
  'too-large': 'INVALID_ARGUMENT',
  'rate-limit': 'RESOURCE_EXHAUSTED',
  server: 'INTERNAL',
  overloaded: 'UNAVAILABLE',
  'client-closed': 'CANCELLED',
};

const FAULT_TEXT: Record<number, string> = {
  429: 'Resource has been exhausted (e.g. check quota).',
  500: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  502: 'Bad Gateway',
  503: 'The model is overloaded. Please try again later.',
};

/**
 * Gemini (Google AI) `generateContent`: `POST …/models/{model}:generateContent`,
 * `:streamGenerateContent` (with `?alt=sse` SSE events of one GenerateContentResponse each, as
 * @google/genai and Gemini CLI ask; without it one JSON array of them) and `:countTokens`. The key
 * comes in `x-goog-api-key` or `?key=`. `contents` is checked with the core's Gemini rules
 * (`check` with format 'gemini-contents') and a violation answered with the API's 400
 * `{"error":{"code":400,"message":…,"status":"INVALID_ARGUMENT"}}`.
 */
export function createGeminiWire(): EmulatorWire {
  const error: EmulatorWire['error'] = (status, kind, message, extra = {}) =>
    json(status, { error: { code: status, message, status: STATUSES[kind] } }, extra.headers);
  return {
    name: 'gemini',
    paths: [
      'POST /v1beta/models/{model}:generateContent',
      'POST /v1beta/models/{model}:streamGenerateContent',
      'POST /v1beta/models/{model}:countTokens',
    ],
    idStyle: 'call',
    route(path) {
      const method = PATH.exec(path)?.[2];
      return method === undefined ? undefined : method === 'countTokens' ? 'count-tokens' : 'generate';
    },
    modelOf: (url) => PATH.exec(url.pathname)?.[1],
    error,
    /** The API refuses a request with no key (header, query or OAuth bearer) before reading it. */
    checkHeaders(headers, url) {
      if (headers.has('x-goog-api-key') || url.searchParams.has('key')) return undefined;
      if (/^Bearer \S/i.test(headers.get('authorization') ?? '')) return undefined;
      return error(
        403,
        'authentication',
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      );
    },
    // Google's ESF answers a body it cannot parse with "Invalid JSON payload received." and the parser's reason.
    notJson: (reason) => error(400, 'invalid-request', `Invalid JSON payload received. ${reason}`),
    check: (body, route, url) => checkRequest(body, route, PATH.exec(url.pathname)?.[1]),
    violation: (violation: Violation) => error(400, 'invalid-request', violation.message),
    countTokens: (_body, text) => {
      const tokens = estimateTokens(text.length);
      return json(200, { totalTokens: tokens, promptTokensDetails: [{ modality: 'TEXT', tokenCount: tokens }] });
    },
    fault(fault) {
      const headers: Record<string, string> = {};
      const body: Record<string, unknown> = {
        code: fault.status,
        message: FAULT_TEXT[fault.status] ?? FAULT_TEXT[500],
        status: fault.status === 429 ? 'RESOURCE_EXHAUSTED' : fault.status === 500 ? 'INTERNAL' : 'UNAVAILABLE',
      };
      if (fault.status === 429 && fault.retryAfter !== undefined) {
        // The API says when to retry in a google.rpc.RetryInfo detail (Gemini CLI reads it), not a header; both are sent.
        headers['retry-after'] = String(fault.retryAfter);
        body['details'] = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${fault.retryAfter}s` }];
      }
      return json(fault.status, { error: body }, headers);
    },
    overloadedStatus: 503,
    // A stream that fails midway carries the error object as its last event.
    streamError: (kind, message) => sseFrame({ error: { code: 503, message, status: STATUSES[kind] } }),
    answer(answer, { step, chunkSize, url }) {
      const chunks = toChunks(answer, step, chunkSize);
      if (!url.pathname.endsWith(':streamGenerateContent')) return { kind: 'json', body: merge(chunks) };
      if (url.searchParams.get('alt') === 'sse') return { kind: 'stream', frames: chunks.map(sseFrame) };
      return {
        kind: 'stream',
        contentType: 'application/json; charset=UTF-8',
        frames: chunks.map((chunk, index) => `${index === 0 ? '[' : ',\r\n'}${JSON.stringify(chunk)}`).concat([']']),
      };
    },
  };
}

/** The request's own fields first (`contents` a list), then the history: the one place this wire asks the core. */
function checkRequest(
  body: unknown,
  route: 'generate' | 'count-tokens' | 'compact',
  model: string | undefined,
): WireCheck {
  if (!isObject(body))
    return { kind: 'shape', message: 'Invalid JSON payload received. Expected an object (GenerateContentRequest).' };
  // countTokens takes `contents`, or a whole `generateContentRequest`.
  const inner =
    route === 'count-tokens' && isObject(body['generateContentRequest']) ? body['generateContentRequest'] : body;
  const contents = inner['contents'];
  if (contents !== undefined && !Array.isArray(contents))
    return {
      kind: 'shape',
      message: `Invalid value at 'contents' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), ${JSON.stringify(contents)?.slice(0, 40) ?? 'null'}`,
    };
  // The path's model decides whether a final model turn is taken as a prefill (CATALOGUE gemini/ends-with-assistant).
  return {
    kind: 'checked',
    violations: check(contents ?? [], { format: 'gemini-contents', ...(model === undefined ? {} : { model }) }),
  };
}

type Part = Record<string, unknown>;
type Chunk = Record<string, unknown>;

function sseFrame(data: unknown): string {
  return `data: ${JSON.stringify(data)}\r\n\r\n`;
}

/**
 * The parts of an answer: a thought summary when the step has reasoning, the text, one
 * functionCall part per call (parallel calls are parts of one model turn). With reasoning the
 * first part after the thought carries an opaque `thoughtSignature`, as thinking models return it
 * and take it back. A call carries an `id` only when the script gave one (the API leaves it out).
 */
function toParts(answer: Answer, step: Step): Part[] {
  const parts: Part[] = [];
  if (answer.reasoning !== undefined) parts.push({ text: answer.reasoning, thought: true });
  if (answer.text !== '') parts.push({ text: answer.text });
  answer.toolCalls.forEach((call, index) => {
    let args: unknown;
    try {
      args = JSON.parse(call.arguments);
    } catch {
      args = undefined;
    }
    if (!isObject(args))
      throw new UnstuckError(
        'INPUT_INVALID',
        `script: toolCalls[${index}].arguments must be a JSON object on the Gemini wire (functionCall.args is an object), got ${JSON.stringify(call.arguments.slice(0, 40))}`,
      );
    const functionCall: Record<string, unknown> = { name: call.name, args };
    if (step.toolCalls?.[index]?.id !== undefined) functionCall['id'] = call.id;
    parts.push({ functionCall });
  });
  const signed = parts.find((part) => part['thought'] !== true);
  if (answer.reasoning !== undefined && signed !== undefined)
    signed['thoughtSignature'] = Buffer.from(`unstuck-emulator:${answer.id}`).toString('base64');
  return parts;
}

/**
 * One GenerateContentResponse per piece: text in pieces of `chunkSize`, each call whole (the API
 * does not stream arguments). The last chunk carries finishReason and the full usageMetadata.
 */
function toChunks(answer: Answer, step: Step, chunkSize: number): Chunk[] {
  const pieces: Part[] = [];
  for (const part of toParts(answer, step)) {
    if (typeof part['text'] !== 'string' || part['thoughtSignature'] !== undefined || part['text'].length <= chunkSize)
      pieces.push(part);
    else for (const text of split(part['text'], chunkSize)) pieces.push({ ...part, text });
  }
  const responseId = answer.id.replace(/^chatcmpl-emu-/, 'emu');
  const prompt = { promptTokenCount: answer.usage.prompt_tokens };
  return pieces.map((part, index) => {
    const last = index === pieces.length - 1;
    const candidate: Record<string, unknown> = { content: { parts: [part], role: 'model' }, index: 0 };
    if (last) candidate['finishReason'] = 'STOP';
    return {
      candidates: [candidate],
      usageMetadata: last
        ? {
            ...prompt,
            candidatesTokenCount: answer.usage.completion_tokens,
            totalTokenCount: answer.usage.total_tokens,
            promptTokensDetails: [{ modality: 'TEXT', tokenCount: answer.usage.prompt_tokens }],
            ...(answer.reasoning === undefined ? {} : { thoughtsTokenCount: 1 }),
          }
        : { ...prompt, totalTokenCount: answer.usage.prompt_tokens },
      modelVersion: answer.model,
      responseId,
    };
  });
}

/** The non-streaming answer: the chunks' parts in one candidate, adjacent text pieces joined. */
function merge(chunks: Chunk[]): Chunk {
  const parts: Part[] = [];
  for (const chunk of chunks) {
    const part = (chunk['candidates'] as { content: { parts: Part[] } }[])[0]?.content.parts[0];
    if (part === undefined) continue;
    const previous = parts[parts.length - 1];
    const joinable = (value: Part | undefined): boolean =>
      value !== undefined && typeof value['text'] === 'string' && value['thoughtSignature'] === undefined;
    if (joinable(previous) && joinable(part) && previous?.['thought'] === part['thought'])
      parts[parts.length - 1] = { ...previous, text: `${previous?.['text']}${part['text']}` };
    else parts.push({ ...part });
  }
  const last = chunks[chunks.length - 1] ?? {};
  return {
    ...last,
    candidates: [{ content: { parts, role: 'model' }, finishReason: 'STOP', index: 0 }],
  };
}

// A rough chars/4 estimate, as the other wires' usage.
function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

function split(text: string, size: number): string[] {
  const result: string[] = [];
  for (let start = 0; start < text.length; start += size) result.push(text.slice(start, start + size));
  return result;
}
