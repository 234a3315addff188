import type { Violation } from '../../core/index.js';
import { check } from '../../core/index.js';
import type { Answer } from '../completion.js';
import type { EmulatorWire, ErrorKind, WireCheck } from '../wire.js';
import { isObject, json, namedFrame } from './frames.js';

const GENERATE_PATHS = new Set(['/v1/responses', '/responses']);
const COMPACT_PATHS = new Set(['/v1/responses/compact', '/responses/compact']);
const COUNT_PATHS = new Set(['/v1/responses/input_tokens', '/responses/input_tokens']);

/** OpenAI's error types (https://platform.openai.com/docs/guides/error-codes). */
const TYPES: Record<ErrorKind, string> = {
  'invalid-request': 'invalid_request_error',
  authentication: 'invalid_request_error',
  'not-found': 'invalid_request_error',
  'too-large': 'invalid_request_error',
  'rate-limit': 'requests',
  server: 'server_error',
  overloaded: 'server_error',
  'client-closed': 'invalid_request_error',
};

const CODES: Partial<Record<ErrorKind, string>> = {
  authentication: 'invalid_api_key',
  'rate-limit': 'rate_limit_exceeded',
  overloaded: 'server_is_overloaded',
};

const FAULT_TEXT: Record<number, string> = {
  429: 'Rate limit reached for requests. Please try again later.',
  500: 'The server had an error while processing your request. Sorry about that!',
  502: 'Bad gateway.',
  503: 'The server is overloaded or not ready yet.',
};

/** How many stored responses `previous_response_id` can name (the oldest is forgotten first). */
const STORED_RESPONSES = 256;

/**
 * OpenAI Responses: `POST /v1/responses`, `/v1/responses/compact` and `/v1/responses/input_tokens`.
 * The `input` items are checked with the core's Responses rules (`check` with format 'responses-input'),
 * after the items of the response `previous_response_id` names when it is one of this emulator's
 * (the API checks the pairing across both); a violation gets the API's 400
 * `{"error":{"message":…,"type":"invalid_request_error","param":"input","code":null}}`. Answers are
 * a `response` object, or the event stream of
 * https://platform.openai.com/docs/api-reference/responses-streaming: response.created,
 * response.in_progress, then per output item response.output_item.added, its parts and deltas
 * (reasoning_summary_text, output_text, function_call_arguments) and response.output_item.done,
 * then response.completed.
 */
export function createResponsesWire(): EmulatorWire {
  const error: EmulatorWire['error'] = (status, kind, message, extra = {}) =>
    json(
      status,
      { error: { message, type: TYPES[kind], param: extra.param ?? null, code: CODES[kind] ?? null } },
      extra.headers,
    );
  const stored = new Map<string, unknown[]>();
  // The ids of the items this emulator produced together with a reasoning item, and that item's id.
  const producedWith = new Map<string, string>();
  /** The items the API checks: the stored conversation `previous_response_id` names, then `input`. */
  const itemsOf = (body: Record<string, unknown>): unknown[] => {
    const input = body['input'];
    const items = Array.isArray(input) ? input : typeof input === 'string' ? [{ role: 'user', content: input }] : [];
    const previous = body['previous_response_id'];
    return typeof previous === 'string' ? [...(stored.get(previous) ?? []), ...items] : items;
  };
  return {
    name: 'responses',
    paths: ['POST /v1/responses', 'POST /v1/responses/compact', 'POST /v1/responses/input_tokens'],
    idStyle: 'call',
    route: (path) =>
      GENERATE_PATHS.has(path)
        ? 'generate'
        : COMPACT_PATHS.has(path)
          ? 'compact'
          : COUNT_PATHS.has(path)
            ? 'count-tokens'
            : undefined,
    error,
    /**
     * A WebSocket handshake on `/v1/responses` (Codex tries one before it POSTs): this emulator speaks
     * the HTTP transport only, so it refuses the upgrade with 426, on which Codex falls back to HTTP
     * at once (codex-rs/core/src/client.rs: `StatusCode::UPGRADE_REQUIRED` is `FallbackToHttp`).
     */
    notPost(request, route) {
      if (request.method !== 'GET' || route !== 'generate') return undefined;
      if (!/\bwebsocket\b/i.test(request.headers.get('upgrade') ?? '')) return undefined;
      return error(426, 'invalid-request', 'This endpoint is served over HTTP only here: send POST /v1/responses.');
    },
    /** The API refuses a request without a bearer key before reading it (401, param and code null). */
    checkHeaders(headers) {
      if (/^Bearer \S/i.test(headers.get('authorization') ?? '')) return undefined;
      return json(401, {
        error: {
          message:
            "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      });
    },
    notJson: () =>
      error(
        400,
        'invalid-request',
        "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP client correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
      ),
    check(body) {
      const shape = checkShape(body);
      if (shape !== undefined) return shape;
      const request = body as Record<string, unknown>;
      const previous = request['previous_response_id'];
      if (typeof previous === 'string' && !stored.has(previous))
        return {
          kind: 'shape',
          message: `Previous response with id '${previous}' not found.`,
          param: 'previous_response_id',
        };
      const items = itemsOf(request);
      const violations = [...checkItems(items), ...missingReasoning(items, producedWith)];
      return { kind: 'checked', violations: violations.sort((a, b) => a.index - b.index) };
    },
    violation: (violation: Violation) => error(400, 'invalid-request', violation.message, { param: 'input' }),
    countTokens: (_body, text) =>
      json(200, { object: 'response.input_tokens', input_tokens: estimateTokens(text.length) }),
    compact: (body, text) => json(200, toCompaction(body, itemsOf(body), text.length)),
    fault(fault) {
      const headers: Record<string, string> = {};
      if (fault.status === 429 && fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
      const kind: ErrorKind = fault.status === 429 ? 'rate-limit' : fault.status === 503 ? 'overloaded' : 'server';
      return error(fault.status, kind, FAULT_TEXT[fault.status] ?? FAULT_TEXT[500] ?? '', { headers });
    },
    overloadedStatus: 503,
    // The stream's `error` event (ResponseErrorEvent): the SDKs raise it; Codex retries a stream that ends without response.completed.
    streamError: (kind, message) =>
      namedFrame('error', { type: 'error', code: CODES[kind] ?? 'server_error', message, param: null }),
    answer(answer, { body, chunkSize }) {
      const output = toOutput(answer, body);
      const response = toResponse(answer, body, output, 'completed');
      remember(output, producedWith);
      if (body['store'] !== false) {
        stored.set(response.id, [...itemsOf(body), ...output]);
        if (stored.size > STORED_RESPONSES) stored.delete(stored.keys().next().value as string);
      }
      if (body['stream'] !== true) return { kind: 'json', body: response };
      return { kind: 'stream', frames: toEvents(answer, body, output, chunkSize) };
    },
  };
}

/** The request's own fields, worded as the API words a missing or mistyped parameter. */
function checkShape(body: unknown): WireCheck | undefined {
  if (!isObject(body))
    return { kind: 'shape', message: "Invalid type for 'body': expected an object, but got another type instead." };
  if (typeof body['model'] !== 'string')
    return { kind: 'shape', message: "Missing required parameter: 'model'.", param: 'model' };
  const input = body['input'];
  if (input !== undefined && typeof input !== 'string' && !Array.isArray(input))
    return {
      kind: 'shape',
      message: "Invalid type for 'input': expected one of a string or an array of input items, but got another type.",
      param: 'input',
    };
  return undefined;
}

/** The one place this wire asks the core: the Responses rules over the items as the API sees them. */
function checkItems(items: readonly unknown[]): Violation[] {
  return check(items, { format: 'responses-input' });
}

type OutputItem = Record<string, unknown> & { id: string; type: string };

/** How many produced item ids the reasoning check remembers (the oldest is forgotten first). */
const REMEMBERED_ITEMS = 4096;

/** The items of one answer produced after its reasoning item, each with that item's id. */
function remember(output: readonly OutputItem[], producedWith: Map<string, string>): void {
  let reasoning: string | undefined;
  for (const item of output) {
    if (item.type === 'reasoning') reasoning = item.id;
    else if (reasoning !== undefined) producedWith.set(item.id, reasoning);
  }
  while (producedWith.size > REMEMBERED_ITEMS) producedWith.delete(producedWith.keys().next().value as string);
}

/**
 * CATALOGUE openai-responses/reasoning-item-missing, as the API decides it: an item sent with the
 * server id of one this emulator produced together with a reasoning item, without a reasoning item
 * before it in its turn (the items of one response: reasoning, assistant messages and calls in a
 * row). The API's text names both ids (continuedev/continue#10018).
 */
function missingReasoning(items: readonly unknown[], producedWith: ReadonlyMap<string, string>): Violation[] {
  const violations: Violation[] = [];
  let reasoningBefore = false;
  items.forEach((item, index) => {
    if (!isObject(item)) {
      reasoningBefore = false;
      return;
    }
    const type = typeof item['type'] === 'string' ? item['type'] : 'message';
    if (type === 'reasoning') {
      reasoningBefore = true;
      return;
    }
    const produced = type === 'message' ? item['role'] === 'assistant' : type.endsWith('_call');
    if (!produced) {
      reasoningBefore = false;
      return;
    }
    const id = item['id'];
    const reasoning = typeof id === 'string' ? producedWith.get(id) : undefined;
    if (reasoning === undefined || reasoningBefore) return;
    violations.push({
      rule: 'reasoning-item-missing',
      index,
      message: `Item '${String(id)}' of type '${type}' was provided without its required 'reasoning' item: '${reasoning}'.`,
    });
  });
  return violations;
}

function idOf(answer: Answer, prefix: string, index = 0): string {
  return `${prefix}_${answer.id.replace(/^chatcmpl-emu-/, 'emu')}_${String(index).padStart(2, '0')}`;
}

/**
 * The output items: a reasoning item first when the step has reasoning (its summary; with
 * `include: ["reasoning.encrypted_content"]`, as Codex asks with `store: false`, an opaque
 * encrypted_content the next request carries back), the assistant message, then one
 * function_call item per call (parallel calls are consecutive items).
 */
function toOutput(answer: Answer, body: Record<string, unknown>): OutputItem[] {
  const output: OutputItem[] = [];
  if (answer.reasoning !== undefined) {
    const item: OutputItem = {
      id: idOf(answer, 'rs'),
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: answer.reasoning }],
    };
    const include = body['include'];
    if (Array.isArray(include) && include.includes('reasoning.encrypted_content'))
      item['encrypted_content'] = Buffer.from(`unstuck-emulator:${answer.id}`).toString('base64');
    output.push(item);
  }
  if (answer.text !== '') {
    output.push({
      id: idOf(answer, 'msg'),
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: answer.text, annotations: [], logprobs: [] }],
    });
  }
  answer.toolCalls.forEach((call, index) => {
    output.push({
      id: idOf(answer, 'fc', index),
      type: 'function_call',
      status: 'completed',
      arguments: call.arguments,
      call_id: call.id,
      name: call.name,
    });
  });
  return output;
}

function usage(answer: Answer): Record<string, unknown> {
  return {
    input_tokens: answer.usage.prompt_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: answer.usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: answer.reasoning === undefined ? 0 : answer.usage.completion_tokens },
    total_tokens: answer.usage.total_tokens,
  };
}

/** The `response` object, as https://platform.openai.com/docs/api-reference/responses/object lists its fields. */
function toResponse(
  answer: Answer,
  body: Record<string, unknown>,
  output: OutputItem[],
  status: 'in_progress' | 'completed',
): Record<string, unknown> & { id: string } {
  return {
    id: answer.id.replace(/^chatcmpl-emu-/, 'resp_emu_'),
    object: 'response',
    created_at: answer.created,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: body['instructions'] ?? null,
    max_output_tokens: body['max_output_tokens'] ?? null,
    model: answer.model,
    output,
    parallel_tool_calls: body['parallel_tool_calls'] ?? true,
    previous_response_id: body['previous_response_id'] ?? null,
    reasoning: { effort: null, summary: null, ...(isObject(body['reasoning']) ? body['reasoning'] : {}) },
    service_tier: 'default',
    store: body['store'] ?? true,
    temperature: body['temperature'] ?? 1,
    text: body['text'] ?? { format: { type: 'text' } },
    tool_choice: body['tool_choice'] ?? 'auto',
    tools: body['tools'] ?? [],
    top_p: body['top_p'] ?? 1,
    truncation: 'disabled',
    usage: status === 'completed' ? usage(answer) : null,
    user: null,
    metadata: body['metadata'] ?? {},
  };
}

/** The events of a streamed answer, each an SSE event named after its `type`, numbered by `sequence_number`. */
function toEvents(answer: Answer, body: Record<string, unknown>, output: OutputItem[], chunkSize: number): string[] {
  const frames: string[] = [];
  const emit = (type: string, data: Record<string, unknown>): void => {
    frames.push(namedFrame(type, { type, sequence_number: frames.length, ...data }));
  };
  const started = toResponse(answer, body, [], 'in_progress');
  emit('response.created', { response: started });
  emit('response.in_progress', { response: started });
  output.forEach((item, output_index) => {
    const item_id = item.id;
    if (item.type === 'reasoning') {
      const text = answer.reasoning ?? '';
      const { summary: _summary, ...opening } = item;
      emit('response.output_item.added', { output_index, item: { ...opening, summary: [] } });
      const at = { item_id, output_index, summary_index: 0 };
      emit('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
      for (const delta of pieces(text, chunkSize)) emit('response.reasoning_summary_text.delta', { ...at, delta });
      emit('response.reasoning_summary_text.done', { ...at, text });
      emit('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text } });
    } else if (item.type === 'message') {
      emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      const at = { item_id, output_index, content_index: 0 };
      emit('response.content_part.added', {
        ...at,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      });
      for (const delta of pieces(answer.text, chunkSize))
        emit('response.output_text.delta', { ...at, delta, logprobs: [] });
      emit('response.output_text.done', { ...at, text: answer.text, logprobs: [] });
      emit('response.content_part.done', {
        ...at,
        part: { type: 'output_text', text: answer.text, annotations: [], logprobs: [] },
      });
    } else {
      const args = String(item['arguments']);
      emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const delta of pieces(args, chunkSize))
        emit('response.function_call_arguments.delta', { item_id, output_index, delta });
      emit('response.function_call_arguments.done', { item_id, output_index, name: item['name'], arguments: args });
    }
    emit('response.output_item.done', { output_index, item });
  });
  emit('response.completed', { response: toResponse(answer, body, output, 'completed') });
  return frames;
}

/**
 * `/responses/compact`: the user messages kept as they came, then one opaque `compaction` item
 * standing for the rest (its encrypted_content means nothing and is never read back).
 */
function toCompaction(body: Record<string, unknown>, items: readonly unknown[], chars: number): unknown {
  const kept = items.filter((item) => isObject(item) && item['role'] === 'user');
  const tokens = estimateTokens(chars);
  return {
    id: `resp_emu_compact_${items.length}`,
    object: 'response.compaction',
    created_at: Math.floor(Date.now() / 1000),
    model: body['model'],
    output: [
      ...kept,
      {
        id: `cmp_emu_${items.length}`,
        type: 'compaction',
        encrypted_content: Buffer.from(`unstuck-emulator:compacted ${items.length} items`).toString('base64'),
      },
    ],
    usage: {
      input_tokens: tokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 1,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: tokens + 1,
    },
  };
}

// A rough chars/4 estimate, as the other wires' usage.
function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

function pieces(text: string, size: number): string[] {
  const result: string[] = [];
  for (let start = 0; start < text.length; start += size) result.push(text.slice(start, start + size));
  return result;
}
