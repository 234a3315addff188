import type { Change } from './changes.js';
import type { FormatName } from './formats/format-types.js';
import type { Message } from './messages.js';
import type { Profile, ProfileName } from './profile.js';
import type { Remaining } from './violation.js';

/**
 * What `check` and `repair` take. `format` names the wire the items are in (default OpenAI chat).
 * `profile`, `scope`, `model`, `level` and `foldRepeatedUserMessages` choose among the providers
 * of OpenAI chat; each other format has one provider, whose rules it checks (`thinking` applies to
 * Anthropic Messages too).
 */
export interface CheckOptions {
  format?: FormatName;
  profile?: ProfileName | Profile;
  /** 'history' (default): a saved conversation. 'request': the array as sent, adding rules about its end. */
  scope?: 'history' | 'request';
  /** The request's model, when known: some rules depend on it (deepseek-reasoner, thinking defaults). */
  model?: string;
  /** Thinking mode on or off; when absent the profile decides from the model (Anthropic: off). */
  thinking?: boolean;
  /**
   * Where the request goes, when that decides a rule: 'chatgpt-codex' is the ChatGPT-subscription
   * Codex backend (chatgpt.com/backend-api/codex), which refuses system messages in Responses input.
   */
  endpoint?: 'chatgpt-codex';
  /** 'strongest' also checks ids unique across the request and repeated user messages. */
  level?: 'default' | 'strongest';
  /**
   * Whether the same user message twice in a row (a crash retry) is a problem to fold: flagged at
   * level 'strongest' and folded by repair. Default true; false keeps every user message (the agent
   * runner's invariant: a user's message is never removed), merging only where roles must alternate.
   */
  foldRepeatedUserMessages?: boolean;
}

/** What repair does where it has a choice, in every format. */
export interface RepairPolicy {
  /** A call that never got a result: answer it with an error result (default), or strip the call. */
  unanswered?: 'synthesize' | 'strip';
  /** A tool result whose call is gone: keep it as a user text message saying what it was (default), or drop it. */
  orphans?: 'to-user' | 'drop';
}

export interface RepairOptions extends CheckOptions, RepairPolicy {}

export interface RepairResult<Item = Message> {
  /** The repaired history, in the format it came in. When nothing needed repair, the input array itself. */
  messages: Item[];
  /** Every change, each naming the input index it concerns. */
  changes: Change[];
  /** What the provider still rejects, with why repair left it. */
  remaining: Remaining[];
  changed: boolean;
}
