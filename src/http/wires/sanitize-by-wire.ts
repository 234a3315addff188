import type { RuleId } from '../../core/index.js';
import { MAX_HEAL_BODY_BYTES } from '../create-proxy-core.js';
import type { RepairEvent } from '../create-sanitizing-fetch.js';
import { readAnswerText } from '../read-answer-text.js';
import { answerFromText, readFetchRequest } from '../read-fetch-request.js';
import type { RepairPolicy } from '../sanitize-chat-body.js';
import type { HttpWire, NativeWireName, SanitizedWireBody } from './http-wire.js';
import { NATIVE_WIRES } from './wire-table.js';

export interface WireFetchContext {
  send: typeof fetch;
  policy: RepairPolicy | undefined;
  report: (event: RepairEvent) => void;
}

/**
 * The sanitizing fetch for a native wire: undefined when the request is not a POST to one of the
 * table's wires with a body of its shape (the caller then goes on as before). Otherwise the same
 * contract as for chat: the body repaired as a request (the original bytes when nothing needed
 * it), and on the provider's 400 naming a rule the repair can still fix, exactly one retry.
 * Responses, streamed or not, pass through as they came.
 */
export async function sanitizeByWire(
  input: string | URL | Request,
  init: RequestInit | undefined,
  context: WireFetchContext,
): Promise<Response | undefined> {
  const outgoing = await readFetchRequest(input, init, (url) => {
    const wire = NATIVE_WIRES.find((candidate) => candidate.matches(url));
    if (wire === undefined) return undefined;
    return (text) => {
      const body = wire.parse(text);
      return body === undefined ? undefined : { wire, body };
    };
  });
  if (outgoing === undefined) return undefined;
  const { url } = outgoing;
  const { wire, body } = outgoing.body;
  const first = wire.sanitize(body, { policy: context.policy, url });
  if (first.changed) context.report(eventOf(wire, url, 'request', first));
  const response = await context.send(...outgoing.build(first.changed ? JSON.stringify(first.body) : undefined));
  if (response.status !== 400) return response;

  // Read whole only up to the heal's bound, as on the chat path: a larger 400 is relayed as it comes.
  const read = await readAnswerText(response, MAX_HEAL_BODY_BYTES);
  if ('response' in read) return read.response;
  const healed = wire.heal(first.body, response.status, read.text, { policy: context.policy, url });
  if (healed === undefined) return answerFromText(response, read.text);
  context.report({ ...eventOf(wire, url, 'heal', healed), rejectedFor: healed.rejectedFor });
  return context.send(...outgoing.build(JSON.stringify(healed.body)));
}

function eventOf(
  wire: HttpWire<NativeWireName>,
  url: string,
  attempt: RepairEvent['attempt'],
  result: SanitizedWireBody,
): RepairEvent {
  return {
    url: redactKey(url),
    attempt,
    wire: wire.name,
    changes: result.changes,
    rules: result.rules as RuleId[],
    remaining: result.remaining,
  };
}

/** The URL as an event names it: a key in the query (Gemini's `?key=`) is never reported. */
function redactKey(url: string): string {
  if (!/[?&]key=/.test(url)) return url;
  try {
    const parsed = new URL(url);
    parsed.searchParams.set('key', 'REDACTED');
    return parsed.href;
  } catch {
    return url.replace(/([?&]key=)[^&#]*/g, '$1REDACTED');
  }
}
