import type { Message, ProfileName } from '../../core/index.js';
import { check, getProfile } from '../../core/index.js';
import { toChunks, toCompletion } from '../completion.js';
import type { EmulatorWire, ErrorKind } from '../wire.js';
import { dataFrame, isObject, json } from './frames.js';

const PATHS = new Set(['/v1/chat/completions', '/chat/completions']);

const TYPES: Record<ErrorKind, string> = {
  'invalid-request': 'invalid_request_error',
  authentication: 'invalid_request_error',
  'not-found': 'invalid_request_error',
  'too-large': 'invalid_request_error',
  'rate-limit': 'rate_limit_error',
  server: 'server_error',
  overloaded: 'server_error',
  'client-closed': 'invalid_request_error',
};

const FAULT_TEXT: Record<number, string> = {
  429: 'Rate limit reached: too many requests, slow down',
  500: 'The server had an error while processing your request',
};

/**
 * OpenAI chat completions, under one provider profile's rules and error bodies (DeepSeek, OpenAI,
 * Mistral, ...): `POST /v1/chat/completions` and `/chat/completions`.
 */
export function createChatWire(options: { profile: ProfileName; thinking: boolean | undefined }): EmulatorWire {
  const { profile } = options;
  const error: EmulatorWire['error'] = (status, kind, message, extra = {}) =>
    json(status, { error: { message, type: TYPES[kind], param: extra.param ?? null, code: null } }, extra.headers);
  return {
    name: 'chat',
    paths: ['POST /v1/chat/completions', 'GET /v1/models'],
    idStyle: profile === 'mistral' ? 'mistral' : 'call',
    route: (path) => (PATHS.has(path) ? 'generate' : undefined),
    error,
    // The chat wire has always taken any request, keyed or not (tests and local servers send none).
    checkHeaders: () => undefined,
    /**
     * DeepSeek runs on axum, whose JSON extractor answers a syntax error with "Failed to parse the
     * request body as JSON: ..." (inferred from the axum-style deserialize error in rules.json
     * deepseek/role-unknown); OpenAI answers with its own "could not parse" text.
     */
    notJson: (reason) =>
      profile === 'deepseek'
        ? error(400, 'invalid-request', `Failed to parse the request body as JSON: ${reason}`)
        : error(
            400,
            'invalid-request',
            "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP client correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
          ),
    check(body) {
      if (!isObject(body))
        return {
          kind: 'shape',
          message:
            "Invalid request: expected a JSON object with a 'messages' array, got a body that is not a JSON object",
          param: 'messages',
        };
      if (!Array.isArray(body['messages']))
        return {
          kind: 'shape',
          message: "Invalid request: expected a JSON object with a 'messages' array, got no 'messages' array",
          param: 'messages',
        };
      const thinkingType: unknown = (body['thinking'] as { type?: unknown } | undefined)?.type;
      const thinking = thinkingType === 'enabled' ? true : thinkingType === 'disabled' ? false : options.thinking;
      const checkOptions: { profile: ProfileName; scope: 'request'; model?: string; thinking?: boolean } = {
        profile,
        scope: 'request',
      };
      if (typeof body['model'] === 'string') checkOptions.model = body['model'];
      if (thinking !== undefined) checkOptions.thinking = thinking;
      return { kind: 'checked', violations: check(body['messages'] as Message[], checkOptions) };
    },
    violation(violation) {
      const answer = getProfile(profile).errorResponse(violation);
      return json(answer.status, answer.body);
    },
    countTokens: () => error(404, 'not-found', 'Unknown path: chat completions have no token-count endpoint'),
    fault(fault) {
      const headers: Record<string, string> = {};
      if (fault.status === 429 && fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
      const kind: ErrorKind = fault.status === 429 ? 'rate-limit' : 'server';
      return error(fault.status, kind, FAULT_TEXT[fault.status] ?? 'The server is overloaded or not ready yet', {
        headers,
      });
    },
    overloadedStatus: 503,
    // OpenAI-compatible servers put an `error` object in a data event when they fail mid-stream.
    streamError: (kind, message) => dataFrame({ error: { message, type: TYPES[kind], param: null, code: null } }),
    answer(answer, { body, chunkSize }) {
      if (body['stream'] !== true) return { kind: 'json', body: toCompletion(answer) };
      const streamOptions = body['stream_options'] as { include_usage?: unknown } | undefined;
      const usage = profile === 'deepseek' ? 'on-finish' : streamOptions?.include_usage === true ? 'separate' : 'none';
      const frames = toChunks(answer, { chunkSize, usage }).map((chunk) => dataFrame(chunk));
      frames.push('data: [DONE]\n\n');
      return { kind: 'stream', frames };
    },
  };
}
