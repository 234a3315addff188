/**
 * Change kinds are API: add, never rename. Every change names the input index it concerns, so a
 * repair never loses anything silently: what went, went with a change that says why.
 */
export type ChangeKind =
  | 'message-moved' // a message wedged inside a tool block, moved after the block (order kept)
  | 'result-synthesized' // an error result added for a call that never got one
  | 'call-stripped' // an unanswered call removed from its assistant message (policy unanswered: 'strip')
  | 'orphan-to-user' // a tool result without its call, turned into a user text message saying what it was
  | 'orphan-dropped' // the same, dropped (policy orphans: 'drop')
  | 'result-duplicate-dropped' // a second result for the same call
  | 'parallel-calls-merged' // parallel calls split across consecutive assistant messages, merged back
  | 'id-generated' // a call or result without an id, given a stable generated one (shared by both)
  | 'id-remapped' // an id changed consistently in the call and its results (duplicate, or the provider's format)
  | 'empty-message-dropped' // a message with nothing in it
  | 'user-repeat-collapsed' // the same user message twice in a row (a crash retry), kept once
  | 'messages-merged' // consecutive same-role messages merged where the provider requires alternation
  | 'tool-calls-empty-removed' // `tool_calls: []` removed
  | 'tool-call-rebuilt' // a call's flattened name/arguments put back into its `function` object
  | 'tool-use-part-removed' // an Anthropic tool_use content part that duplicates a tool_calls entry
  | 'arguments-repaired' // arguments that were not a JSON object made into one (the original kept inside)
  | 'reasoning-content-filled' // reasoning_content '' added where thinking mode requires the key
  | 'assistant-bridge-inserted' // an assistant message inserted between a tool result and a user message (Mistral)
  | 'content-filled' // null content replaced by '' where the provider needs a string
  | 'role-renamed' // a role the provider does not know, mapped to its equivalent (developer -> system)
  | 'system-moved-to-start' // a later system message merged into the leading one
  | 'field-removed' // a field the provider rejects, removed
  | 'malformed-dropped' // an entry that is not a message object
  // Kinds only the native formats (Anthropic Messages, Gemini contents, Responses input) make:
  | 'block-dropped' // an empty text block (or a part with no data), dropped
  | 'blocks-reordered' // tool_result blocks moved to the front of their user message
  | 'call-to-text' // a call turn that cannot stand where it is, kept as user text
  | 'item-dropped' // a Responses item the API rejects (an exact duplicate, a dangling reasoning item)
  | 'text-trimmed' // Anthropic: trailing whitespace cut from a final assistant (prefill) text
  | 'prefill-dropped'; // Anthropic: a final assistant (prefill) message dropped for a model without prefill (level strongest)

export interface Change {
  kind: ChangeKind;
  /** Index of the element in the INPUT array (a message, a content or an input item). */
  index: number;
  toolCallId?: string;
  detail: string;
}
