import type { ChangeKind } from '../changes.js';
import type { RuleId } from '../rule-ids.js';

/** The wire formats besides OpenAI chat that `checkFormat` and `repairFormat` read. */
export type FormatName = 'anthropic-messages' | 'gemini-contents' | 'responses-input';

export const formatNames: readonly FormatName[] = ['anthropic-messages', 'gemini-contents', 'responses-input'];

export function isFormatName(name: string): name is FormatName {
  return (formatNames as readonly string[]).includes(name);
}

/** A violation of a format's rules. `index` is the index in the NATIVE array (messages, contents or input items). */
export interface FormatViolation {
  rule: RuleId;
  index: number;
  toolCallId?: string;
  /** The violation as the provider words it in its 400. */
  message: string;
}

/** Change kinds only the native formats need, besides the core's. */
export type FormatChangeKind =
  | ChangeKind
  | 'block-dropped' // an empty text block (or a part with no data), dropped
  | 'blocks-reordered' // tool_result blocks moved to the front of their user message
  | 'call-to-text' // a call turn that cannot stand where it is, kept as user text
  | 'item-dropped' // a Responses item the API rejects (an exact duplicate, a dangling reasoning item)
  | 'text-trimmed' // Anthropic: trailing whitespace cut from a final assistant (prefill) text
  | 'prefill-dropped'; // Anthropic: a final assistant (prefill) message dropped for a model without prefill (level strongest)

/** Every change names the index of the element in the NATIVE input it concerns. */
export interface FormatChange {
  kind: FormatChangeKind;
  index: number;
  toolCallId?: string;
  detail: string;
}

export interface FormatRemaining extends FormatViolation {
  why: string;
}

export interface FormatCheckOptions {
  /**
   * Anthropic: extended thinking is on for the request (the current tool loop then needs its signed thinking block);
   * false: it is off (the final assistant message then may not hold thinking); undefined: not known.
   */
  thinking?: boolean;
  /** Anthropic: the request's model; rules that differ by model (prefill, mid-conversation system) are checked only when it is known. */
  model?: string;
}

export interface FormatRepairOptions extends FormatCheckOptions {
  /** A call that never got a result: answer it with an error result (default), or strip the call. */
  unanswered?: 'synthesize' | 'strip';
  /** A result whose call is gone: keep it as user text (default), or drop it. */
  orphans?: 'to-user' | 'drop';
  /** Anthropic: strongest also drops what the caller wrote but the model cannot take (a prefill for a model without prefill). */
  level?: 'default' | 'strongest';
}

export interface FormatRepairResult {
  /** The repaired native array. When nothing needed repair, the input array itself. */
  messages: unknown[];
  changes: FormatChange[];
  remaining: FormatRemaining[];
  changed: boolean;
}

/** What a converter returns: the OpenAI-chat form, and for each converted message the index of the native element it came from. */
export interface Converted<M> {
  messages: M[];
  origins: number[];
}
