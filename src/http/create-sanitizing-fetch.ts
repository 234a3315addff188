import type { Change, Profile, ProfileName, Remaining, RuleId } from '../core/index.js';
import { MAX_HEAL_BODY_BYTES } from './create-proxy-core.js';
import { healChatBody } from './heal-chat-body.js';
import { isChatCompletionsPath } from './is-chat-completions-path.js';
import { readAnswerText } from './read-answer-text.js';
import { answerFromText, readFetchRequest } from './read-fetch-request.js';
import type { RepairPolicy, SanitizedChatBody } from './sanitize-chat-body.js';
import { parseChatBody, sanitizeChatBody } from './sanitize-chat-body.js';
import type { NativeWireName } from './wires/http-wire.js';
import { sanitizeByWire } from './wires/sanitize-by-wire.js';

/** What one repair of an outgoing request did; `attempt: 'heal'` is the one retry after a provider 400. */
export interface RepairEvent {
  url: string;
  attempt: 'request' | 'heal';
  /** The wire, for a native one (src/http/wires/); absent for chat completions. */
  wire?: NativeWireName;
  /** The core's changes (a native wire's include the kinds only the native formats make). */
  changes: Change[];
  rules: RuleId[];
  remaining: Remaining[];
  /** For a heal: the rule the provider's 400 was classified as. */
  rejectedFor?: RuleId;
}

export interface SanitizingFetchOptions {
  /** The provider whose rules the request must meet (default: the core's default, OpenAI). */
  profile?: ProfileName | Profile;
  policy?: RepairPolicy;
  /** The fetch to send through (default: the global fetch, looked up at call time). */
  fetch?: typeof fetch;
  /** Called after every repair that changed something. Must not throw. */
  onRepair?: (event: RepairEvent) => void;
}

/**
 * A `fetch` for any SDK. POSTs to a chat-completions endpoint are repaired before they are sent;
 * when nothing needed repair the original body goes out untouched (same string, same bytes).
 * A 400 that the core classifies as a pairing or ordering rule is repaired again with the
 * strongest policy and retried exactly once. Responses, streamed or not, pass through as they came.
 */
export function createSanitizingFetch(options: SanitizingFetchOptions = {}): typeof fetch {
  const send: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const report = (event: RepairEvent): void => {
    try {
      options.onRepair?.(event);
    } catch {
      // A broken observer must not break the request.
    }
  };

  return async function sanitizingFetch(input, init) {
    const native = await sanitizeByWire(input, init, { send, policy: options.policy, report });
    if (native !== undefined) return native;
    const outgoing = await readFetchRequest(input, init, (url) =>
      isChatCompletionsPath(url) ? parseChatBody : undefined,
    );
    if (outgoing === undefined) return send(input, init);

    const first = sanitizeChatBody(outgoing.body, { profile: options.profile, policy: options.policy });
    if (first.changed) report(eventOf(outgoing.url, 'request', first));
    const response = await send(...outgoing.build(first.changed ? JSON.stringify(first.body) : undefined));
    if (response.status !== 400) return response;

    const read = await readAnswerText(response, MAX_HEAL_BODY_BYTES);
    if ('response' in read) return read.response; // too large to be a pairing error: handed over unread
    const healed = healChatBody(first.body, response.status, read.text, {
      profile: options.profile,
      policy: options.policy,
    });
    if (healed === undefined) return answerFromText(response, read.text);
    report({ ...eventOf(outgoing.url, 'heal', healed), rejectedFor: healed.rejectedFor });
    return send(...outgoing.build(JSON.stringify(healed.body)));
  };
}

function eventOf(url: string, attempt: RepairEvent['attempt'], result: SanitizedChatBody): RepairEvent {
  return { url, attempt, changes: result.changes, rules: result.rules, remaining: result.remaining };
}
