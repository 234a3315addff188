import type { RepairOptions } from '../../core/index.js';
import { check, classifyError, repair } from '../../core/index.js';
import { openAIError } from '../openai-error-response.js';
import type { HttpWire, RepairSettings, SanitizedWireBody, WireBody } from './http-wire.js';
import { healsNamedRule, parseObject, pathnameOf, repairedRules } from './http-wire.js';

/**
 * OpenAI Responses: `POST …/responses`, `…/responses/compact` and `…/responses/input_tokens`,
 * whatever the base path (Codex's `base_url` ends in `/v1`). The `input` items are repaired with
 * the core's Responses format (`repair` with format 'responses-input'): pairing by call_id, duplicate
 * items, reasoning kept with the item it belongs to; opaque items (compaction, encrypted
 * reasoning) are never altered.
 *
 * A body with `previous_response_id` goes out untouched: its outputs may answer calls of the
 * stored response, which only the provider can see, so a repair here would take valid outputs for
 * orphans. A string `input` has no history and goes out untouched as well.
 */
const RESPONSES_PATH = /\/responses(?:\/compact|\/input_tokens)?\/?$/;
/** The create path alone (`…/responses`), where Codex opens its WebSocket (`websocket_url_for_path` appends `/responses`). */
const CREATE_PATH = /\/responses\/?$/;

export const responsesWire: HttpWire<'responses'> = {
  name: 'responses',
  matchesPath: (pathname) => RESPONSES_PATH.test(pathname),
  matches(url) {
    const pathname = pathnameOf(url);
    return pathname !== undefined && RESPONSES_PATH.test(pathname);
  },
  parse(text) {
    const body = parseObject(text);
    if (body === undefined || !Array.isArray(body['input'])) return undefined;
    const previous = body['previous_response_id'];
    return previous === undefined || previous === null ? body : undefined;
  },
  sanitize: (body, settings) => sanitize(body, settings),
  heal(sent, status, text, settings) {
    if (status !== 400) return undefined;
    const verdict = classifyError(status, text);
    if (verdict === undefined || verdict.provider !== 'openai-responses') return undefined;
    // The request was repaired before it went out: the retry is the strongest repair of it (which
    // also takes an unread model for a reasoning one and system messages as refused), sent only when
    // that removes what the 400 named.
    const healed = sanitize(sent, settings, 'strongest');
    return healed.changed && healsNamedRule(healed.rules, verdict.rule)
      ? { ...healed, rejectedFor: verdict.rule }
      : undefined;
  },
  answersLocally(method, pathname) {
    if (method !== 'GET' || !CREATE_PATH.test(pathname)) return undefined;
    // A GET on the create path is the Responses WebSocket handshake (Codex tries it first). The proxy
    // repairs HTTP bodies and relays no WebSocket, so it refuses the upgrade with 426 Upgrade
    // Required: the one status on which Codex falls back to HTTP at once, without retries or a
    // warning (codex-rs/core/src/client.rs, `stream_responses_websocket`: `TransportError::Http {
    // status }` with `status == StatusCode::UPGRADE_REQUIRED` returns
    // `WebsocketStreamOutcome::FallbackToHttp`, and `try_switch_fallback_transport` keeps the
    // session on HTTP; any other handshake status is a stream error, retried with backoff first).
    return {
      status: 426,
      message:
        'unstuck proxy: the Responses WebSocket transport is not relayed here; send POST …/responses (HTTP, streamed with SSE)',
      code: 'websocket_not_supported',
    };
  },
  // The Responses API answers errors in OpenAI's envelope: {error: {message, type, param, code}}.
  error: (status, message, code) => openAIError(status, message, code),
};

/** The ChatGPT-subscription Codex backend (what Codex's `chatgpt` auth talks to), which refuses system messages. */
const CHATGPT_CODEX = /^https:\/\/chatgpt\.com\/backend-api\/codex(?:\/|$)/;

/** The one place this wire asks the core: repair `input`, and name the rules the repair removed. */
function sanitize(
  body: WireBody,
  settings: RepairSettings,
  level: 'default' | 'strongest' = 'default',
): SanitizedWireBody {
  const input = body['input'] as unknown[];
  // The request's model and where it goes decide the rules that depend on them (reasoning items, system messages).
  const options: RepairOptions = { format: 'responses-input', level };
  if (typeof body['model'] === 'string') options.model = body['model'];
  if (settings.url !== undefined && CHATGPT_CODEX.test(settings.url)) options.endpoint = 'chatgpt-codex';
  const policy = settings.policy;
  if (policy?.unanswered !== undefined) options.unanswered = policy.unanswered;
  if (policy?.orphans !== undefined) options.orphans = policy.orphans;
  const result = repair(input, options);
  if (!result.changed) return { body, changed: false, changes: [], rules: [], remaining: result.remaining };
  return {
    body: { ...body, input: result.messages },
    changed: true,
    changes: result.changes,
    rules: repairedRules(check(input, options), result.remaining),
    remaining: result.remaining,
  };
}
