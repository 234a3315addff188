/** Provider keys of the wording table: which provider's own error text a violation reads like. */
export type Dialect = 'openai' | 'deepseek' | 'qwen' | 'mistral' | 'moonshot' | 'groq';

export type ProfileName = 'openai' | 'deepseek' | 'qwen' | 'mistral' | 'moonshot' | 'groq' | 'anthropic' | 'local';

/**
 * What a rule may read of the profile it runs under: the provider's traits, not its rule list.
 * Kept apart from `Profile` (which holds the rules) so the rules import no file that imports them.
 */
export interface ProfileTraits {
  name: ProfileName;
  dialect: Dialect;
  roles: ReadonlySet<string>;
  /** Call ids must match this (Mistral's nine characters). */
  idPattern?: RegExp;
  /** When set, the only fields each role may carry (Groq). */
  fields?: Readonly<Record<string, ReadonlySet<string>>>;
  /** User and assistant must alternate (tool results aside). */
  strictAlternation?: boolean;
  /** content must be a string or non-empty parts on every message, tool-call turns included. */
  contentAlwaysRequired?: boolean;
  /** Assistant content must be a string, not an array of parts (Groq, 2024). */
  assistantContentString?: boolean;
  /** Call ids must be unique across the whole request, not only within one message. */
  uniqueIdsAcrossRequest: boolean;
  /** Content holds another wire format's blocks (a converted history): only the message object itself is checked, not its content parts. */
  nativeContent?: boolean;
  /** Whether thinking mode applies when the caller does not say; `model` is the request's model, if known. */
  thinkingByDefault(model: string | undefined): boolean;
}
