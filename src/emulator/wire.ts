import type { Violation } from '../core/index.js';
import type { Answer, IdStyle } from './completion.js';
import type { Fault, Step } from './step.js';

/** The wires the emulator speaks, each on its own paths. */
export type WireName = 'chat' | 'anthropic' | 'responses' | 'gemini';

/**
 * What a request on a wire asks for: a model answer (uses up a script step), a token count or a
 * compaction (Responses `/responses/compact`; neither uses up a step).
 */
export type WireRoute = 'generate' | 'count-tokens' | 'compact';

/** The failures every wire can answer, each worded and typed in that wire's own error body. */
export type ErrorKind =
  | 'invalid-request'
  | 'authentication'
  | 'not-found'
  | 'too-large'
  | 'rate-limit'
  | 'server'
  | 'overloaded'
  | 'client-closed';

/** What a wire makes of a parsed body: the shape is wrong (one line, the provider's wording), or these are its violations. */
export type WireCheck =
  | { kind: 'shape'; message: string; param?: string }
  | { kind: 'checked'; violations: Violation[] };

/** What a valid, generating request is answered with: one JSON body, or SSE frames (already formatted, `event:`/`data:` lines and the blank line). */
export type WireAnswer =
  | { kind: 'json'; body: unknown }
  /** `contentType` when it is not `text/event-stream` (Gemini's streamGenerateContent without `?alt=sse` streams a JSON array). */
  | { kind: 'stream'; frames: string[]; contentType?: string };

/**
 * One wire of the emulator: its paths, its error body, how a request is checked with the core and
 * how an answer is written. `createEmulator` runs the same pipeline for every wire (read, parse,
 * check, script step, fault, answer); a new wire (Responses, Gemini) is one more entry in the
 * table in create-emulator.ts, not another branch.
 */
export interface EmulatorWire {
  name: WireName;
  /** The requests it serves, for the emulator's 404 text (`POST /v1/messages`, ...). */
  paths: readonly string[];
  /**
   * The answer to a request of this wire's path that is not a POST, where the wire has one of its own
   * (else the emulator's 405). The Responses wire answers a WebSocket handshake 426: it speaks HTTP only.
   */
  notPost?(request: Request, route: WireRoute): Response | undefined;
  /** The route a path is on this wire, or undefined when the path is not this wire's. */
  route(path: string): WireRoute | undefined;
  /** An error in the wire's own body shape and type names. */
  error(
    status: number,
    kind: ErrorKind,
    message: string,
    options?: { param?: string | null; headers?: Record<string, string> },
  ): Response;
  /** The provider's answer to a request whose headers it refuses before reading the body (a missing key or version), else undefined. */
  checkHeaders(headers: Headers, url: URL): Response | undefined;
  /** A body that is not JSON, worded as this provider words it. */
  notJson(reason: string): Response;
  /** Checks a parsed body: its shape for the route, then its history with the core at request scope (the URL may name the model). */
  check(body: unknown, route: WireRoute, url: URL): WireCheck;
  /** The provider's own answer to the first violation. */
  violation(violation: Violation): Response;
  /** The answer to a valid count-tokens request. */
  countTokens(body: Record<string, unknown>, bodyText: string): Response;
  /** The answer to a valid compaction request (only wires with a `compact` route). */
  compact?(body: Record<string, unknown>, bodyText: string): Response;
  /** The answer to a scripted status fault (429, 5xx, 529). */
  fault(fault: Extract<Fault, { status: number }>): Response;
  /** The status the wire's provider answers "overloaded" with (Anthropic 529, chat 503). */
  overloadedStatus: 429 | 500 | 502 | 503 | 529;
  /** The SSE frame a provider sends when it fails mid-stream (then the stream ends). */
  streamError(kind: ErrorKind, message: string): string;
  /** The answer to a valid generating request; throws `UnstuckError` when the step cannot be said on this wire. */
  answer(
    answer: Answer,
    context: { body: Record<string, unknown>; step: Step; chunkSize: number; url: URL },
  ): WireAnswer;
  /** The model a request names, when the body does not (Gemini names it in the path). */
  modelOf?(url: URL): string | undefined;
  /** How generated tool-call ids look on this wire. */
  idStyle: IdStyle;
}
