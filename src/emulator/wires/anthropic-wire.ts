import type { CheckOptions } from '../../core/index.js';
import { check, getProfile, UnstuckError } from '../../core/index.js';
import type { Answer } from '../completion.js';
import type { EmulatorWire, ErrorKind, WireCheck, WireRoute } from '../wire.js';
import { isObject, json, namedFrame } from './frames.js';

const MESSAGES_PATHS = new Set(['/v1/messages', '/messages']);
const COUNT_PATHS = new Set(['/v1/messages/count_tokens', '/messages/count_tokens']);

/** Anthropic's error types by status (https://docs.claude.com/en/api/errors). */
const TYPES: Record<ErrorKind, string> = {
  'invalid-request': 'invalid_request_error',
  authentication: 'authentication_error',
  'not-found': 'not_found_error',
  'too-large': 'request_too_large',
  'rate-limit': 'rate_limit_error',
  server: 'api_error',
  overloaded: 'overloaded_error',
  'client-closed': 'invalid_request_error',
};

const FAULT_TEXT: Record<number, string> = {
  429: 'This request would exceed the rate limit for your organization. Please reduce the prompt length or the maximum tokens requested, or try again later.',
  500: 'Internal server error',
  529: 'Overloaded',
};

/**
 * Anthropic Messages: `POST /v1/messages` (any query, e.g. Claude Code's `?beta=true`) and
 * `/v1/messages/count_tokens`. The history is checked with the core's Anthropic rules
 * (`check` with format 'anthropic-messages'), the violation answered with the anthropic profile's own
 * 400 body `{"type":"error","error":{"type":"invalid_request_error","message":…}}`. Answers are a
 * `message` object, or the event stream of https://docs.claude.com/en/docs/build-with-claude/streaming:
 * message_start, content_block_start, ping, content_block_delta (thinking_delta + signature_delta,
 * text_delta, input_json_delta), content_block_stop, message_delta (stop_reason, usage), message_stop.
 */
export function createAnthropicWire(): EmulatorWire {
  const error: EmulatorWire['error'] = (status, kind, message, extra = {}) =>
    json(status, { type: 'error', error: { type: TYPES[kind], message } }, extra.headers);
  return {
    name: 'anthropic',
    paths: ['POST /v1/messages', 'POST /v1/messages/count_tokens'],
    idStyle: 'toolu',
    route: (path) => (MESSAGES_PATHS.has(path) ? 'generate' : COUNT_PATHS.has(path) ? 'count-tokens' : undefined),
    error,
    /**
     * The API refuses a request without a key (401 "x-api-key header is required", karthink/gptel#354;
     * an OAuth bearer token in `authorization` counts) or without `anthropic-version` (400
     * "anthropic-version: header is required", PipedreamHQ/pipedream#9697), before the body: so a
     * proxy in front of the emulator is seen to forward both.
     */
    checkHeaders(headers) {
      if (!headers.has('x-api-key') && !/^Bearer \S/i.test(headers.get('authorization') ?? ''))
        return error(401, 'authentication', 'x-api-key header is required');
      if (!headers.has('anthropic-version'))
        return error(400, 'invalid-request', 'anthropic-version: header is required');
      return undefined;
    },
    // No catalogued text for a body that is not JSON: worded after the API's validation messages.
    notJson: (reason) =>
      error(
        400,
        'invalid-request',
        `There was an issue with the format of your request: the body is not valid JSON (${reason})`,
      ),
    check: (body, route) => checkRequest(body, route),
    violation(violation) {
      const answer = getProfile('anthropic').errorResponse(violation);
      return json(answer.status, answer.body);
    },
    countTokens: (_body, text) => json(200, { input_tokens: estimateTokens(text.length) }),
    fault(fault) {
      const headers: Record<string, string> = {};
      if (fault.status === 429 && fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
      const kind: ErrorKind = fault.status === 429 ? 'rate-limit' : fault.status === 529 ? 'overloaded' : 'server';
      return error(fault.status, kind, FAULT_TEXT[fault.status] ?? 'Internal server error', { headers });
    },
    overloadedStatus: 529,
    // https://docs.claude.com/en/docs/build-with-claude/streaming#error-events
    streamError: (kind, message) => namedFrame('error', { type: 'error', error: { type: TYPES[kind], message } }),
    answer(answer, { body, chunkSize }) {
      const thinking = thinkingOf(body);
      const blocks = toBlocks(answer, thinking);
      const message = toMessage(answer, blocks);
      if (body['stream'] !== true) return { kind: 'json', body: message };
      return { kind: 'stream', frames: toEvents(answer, blocks, chunkSize) };
    },
  };
}

/** Request-shape rules before the history's, worded as the API's pydantic validation words them. */
function checkRequest(body: unknown, route: WireRoute): WireCheck {
  if (!isObject(body)) return { kind: 'shape', message: 'Input should be a valid dictionary' };
  if (typeof body['model'] !== 'string') return { kind: 'shape', message: 'model: Field required' };
  if (route === 'generate' && typeof body['max_tokens'] !== 'number')
    return { kind: 'shape', message: 'max_tokens: Field required' };
  const messages = body['messages'];
  if (messages === undefined) return { kind: 'shape', message: 'messages: Field required' };
  if (!Array.isArray(messages)) return { kind: 'shape', message: 'messages: Input should be a valid list' };
  // The request's model and thinking setting decide the rules that depend on them (prefill, thinking when disabled).
  const options: CheckOptions = { format: 'anthropic-messages' };
  const thinking = thinkingOf(body);
  if (thinking !== undefined) options.thinking = thinking;
  if (typeof body['model'] === 'string') options.model = body['model'];
  return { kind: 'checked', violations: check(messages, options) };
}

/** Extended thinking is on for `thinking: {type: "enabled"}` and `{type: "adaptive"}`. */
function thinkingOf(body: Record<string, unknown>): boolean {
  const type: unknown = (body['thinking'] as { type?: unknown } | undefined)?.type;
  return type === 'enabled' || type === 'adaptive';
}

type Block =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown>; partialJson: string };

/**
 * The content blocks of an answer. With thinking on, the answer opens with a signed thinking block,
 * as Claude's does (and as the next request of the tool loop must then send back, CATALOGUE
 * anthropic/thinking-block-missing); the signature is deterministic, opaque, and never checked.
 */
function toBlocks(answer: Answer, thinking: boolean): Block[] {
  const blocks: Block[] = [];
  if (answer.reasoning !== undefined || thinking) {
    blocks.push({
      type: 'thinking',
      thinking: answer.reasoning ?? 'Answering from the script.',
      signature: Buffer.from(`unstuck-emulator:${answer.id}`).toString('base64'),
    });
  }
  if (answer.text !== '') blocks.push({ type: 'text', text: answer.text });
  answer.toolCalls.forEach((call, index) => {
    let input: unknown;
    try {
      input = JSON.parse(call.arguments);
    } catch {
      input = undefined;
    }
    if (!isObject(input))
      throw new UnstuckError(
        'INPUT_INVALID',
        `script: toolCalls[${index}].arguments must be a JSON object on the Anthropic wire (tool_use.input is an object), got ${JSON.stringify(call.arguments.slice(0, 40))}`,
      );
    blocks.push({ type: 'tool_use', id: call.id, name: call.name, input, partialJson: call.arguments });
  });
  return blocks;
}

function messageId(answer: Answer): string {
  return answer.id.replace(/^chatcmpl-emu-/, 'msg_emu_');
}

function stopReason(answer: Answer): 'tool_use' | 'end_turn' {
  return answer.toolCalls.length > 0 ? 'tool_use' : 'end_turn';
}

function usage(answer: Answer, outputTokens: number): Record<string, unknown> {
  return {
    input_tokens: answer.usage.prompt_tokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: outputTokens,
    service_tier: 'standard',
  };
}

function publicBlock(block: Block): Record<string, unknown> {
  if (block.type !== 'tool_use') return block;
  return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
}

/** The non-streaming `message` object. */
function toMessage(answer: Answer, blocks: Block[]): unknown {
  return {
    id: messageId(answer),
    type: 'message',
    role: 'assistant',
    model: answer.model,
    content: blocks.map(publicBlock),
    stop_reason: stopReason(answer),
    stop_sequence: null,
    usage: usage(answer, answer.usage.completion_tokens),
  };
}

/** The events of a streamed answer, in the order the API sends them (a ping after the first block starts). */
function toEvents(answer: Answer, blocks: Block[], chunkSize: number): string[] {
  const frames: string[] = [];
  const emit = (data: { type: string } & Record<string, unknown>): void => {
    frames.push(namedFrame(data.type, data));
  };
  emit({
    type: 'message_start',
    message: {
      id: messageId(answer),
      type: 'message',
      role: 'assistant',
      model: answer.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: usage(answer, 1),
    },
  });
  blocks.forEach((block, index) => {
    const delta = (payload: Record<string, unknown>): void =>
      emit({ type: 'content_block_delta', index, delta: payload });
    const start =
      block.type === 'thinking'
        ? { type: 'thinking', thinking: '', signature: '' }
        : block.type === 'text'
          ? { type: 'text', text: '' }
          : { type: 'tool_use', id: block.id, name: block.name, input: {} };
    emit({ type: 'content_block_start', index, content_block: start });
    if (index === 0) emit({ type: 'ping' });
    if (block.type === 'thinking') {
      for (const piece of pieces(block.thinking, chunkSize)) delta({ type: 'thinking_delta', thinking: piece });
      delta({ type: 'signature_delta', signature: block.signature });
    } else if (block.type === 'text') {
      for (const piece of pieces(block.text, chunkSize)) delta({ type: 'text_delta', text: piece });
    } else {
      delta({ type: 'input_json_delta', partial_json: '' });
      for (const piece of pieces(block.partialJson, chunkSize))
        delta({ type: 'input_json_delta', partial_json: piece });
    }
    emit({ type: 'content_block_stop', index });
  });
  emit({
    type: 'message_delta',
    delta: { stop_reason: stopReason(answer), stop_sequence: null },
    usage: usage(answer, answer.usage.completion_tokens),
  });
  emit({ type: 'message_stop' });
  return frames;
}

// A rough chars/4 estimate, as the chat wire's usage.
function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

function pieces(text: string, size: number): string[] {
  const result: string[] = [];
  for (let start = 0; start < text.length; start += size) result.push(text.slice(start, start + size));
  return result;
}
