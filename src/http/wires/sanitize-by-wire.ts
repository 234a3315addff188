import type { RuleId } from '../../core/index.js';
import type { RepairEvent } from '../create-sanitizing-fetch.js';
import type { RepairPolicy } from '../sanitize-chat-body.js';
import { anthropicMessagesWire } from './anthropic-messages-wire.js';
import type { HttpWire, SanitizedWireBody, WireBody } from './http-wire.js';

/** The native wires the sanitizing fetch repairs, besides chat completions (which keeps its own path). */
const WIRES: readonly HttpWire[] = [anthropicMessagesWire];

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
export async function sanitizeByWire(input: string | URL | Request, init: RequestInit | undefined, context: WireFetchContext): Promise<Response | undefined> {
  const outgoing = await readWireRequest(input, init);
  if (outgoing === undefined) return undefined;
  const { wire, url, body } = outgoing;
  const first = wire.sanitize(body, context.policy);
  if (first.changed) context.report(eventOf(wire, url, 'request', first));
  const response = await context.send(...outgoing.build(first.changed ? JSON.stringify(first.body) : undefined));
  if (response.status !== 400) return response;

  const text = await response.text();
  const healed = wire.heal(first.body, response.status, text, context.policy);
  if (healed === undefined) {
    const headers = new Headers(response.headers);
    headers.delete('content-length'); // the text is decoded and re-encoded: its length is the new body's
    headers.delete('content-encoding');
    return new Response(text, { status: response.status, statusText: response.statusText, headers });
  }
  context.report({ ...eventOf(wire, url, 'heal', healed), rejectedFor: healed.rejectedFor });
  return context.send(...outgoing.build(JSON.stringify(healed.body)));
}

function eventOf(wire: HttpWire, url: string, attempt: RepairEvent['attempt'], result: SanitizedWireBody): RepairEvent {
  return { url, attempt, wire: wire.name, changes: result.changes, rules: result.rules as RuleId[], remaining: result.remaining };
}

type FetchArguments = [input: string | URL | Request, init?: RequestInit];

interface WireRequest {
  wire: HttpWire;
  url: string;
  body: WireBody;
  /** The arguments to send: the original ones when `text` is undefined, else the same request with this body. */
  build(text: string | undefined): FetchArguments;
}

async function readWireRequest(input: string | URL | Request, init: RequestInit | undefined): Promise<WireRequest | undefined> {
  const isRequest = typeof input === 'object' && 'url' in input && typeof (input as Request).clone === 'function' && !(input instanceof URL);
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : (input as Request).url;
  const method = (init?.method ?? (isRequest ? (input as Request).method : 'GET')).toUpperCase();
  if (method !== 'POST') return undefined;
  const wire = WIRES.find((candidate) => candidate.matches(url));
  if (wire === undefined) return undefined;

  if (init?.body !== undefined && init.body !== null) {
    const text = await bodyText(init.body);
    const body = text === undefined ? undefined : wire.parse(text);
    if (body === undefined) return undefined;
    return {
      wire,
      url,
      body,
      build: (replacement) => (replacement === undefined ? [input, init] : [input, { ...init, body: replacement, headers: withoutContentLength(init.headers) }]),
    };
  }
  if (!isRequest) return undefined;
  const request = new Request(input as Request, init);
  const body = wire.parse(await request.clone().text());
  if (body === undefined) return undefined;
  return {
    wire,
    url,
    body,
    build: (replacement) => (replacement === undefined ? [request.clone()] : [new Request(request, { body: replacement, headers: withoutContentLength(request.headers) })]),
  };
}

async function bodyText(body: NonNullable<RequestInit['body']>): Promise<string | undefined> {
  if (typeof body === 'string') return body;
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return new TextDecoder().decode(body);
  if (body instanceof Blob) return body.text();
  return undefined; // a stream, form data or search params: not a JSON body we can read without consuming it
}

function withoutContentLength(headers: RequestInit['headers'] | Headers | undefined): Headers {
  const result = new Headers(headers);
  result.delete('content-length');
  return result;
}
