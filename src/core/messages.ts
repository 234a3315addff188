/**
 * The OpenAI chat-completions wire format as providers really receive it.
 *
 * Every object keeps unknown fields: a history is data we do not own, so a field this
 * package does not understand (`refusal`, `audio`, `cache_control`, a provider extension)
 * goes out exactly as it came in.
 */

export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function' | (string & {});

export interface TextPart {
  type: 'text';
  text: string;
  [key: string]: unknown;
}

export interface OtherPart {
  type: string;
  [key: string]: unknown;
}

export type ContentPart = TextPart | OtherPart;

export type Content = string | ContentPart[] | null;

export interface ToolCallFunction {
  name?: string;
  arguments?: string;
  [key: string]: unknown;
}

export interface ToolCall {
  id?: string;
  type?: string;
  function?: ToolCallFunction;
  [key: string]: unknown;
}

export interface Message {
  role: Role;
  content?: Content;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  /** DeepSeek / Moonshot thinking mode: the model's reasoning, sent back on tool-call turns. */
  reasoning_content?: string | null;
  /** DeepSeek / Mistral chat prefix completion: the final assistant message is a prefix to continue. */
  prefix?: boolean;
  [key: string]: unknown;
}

/** True when the message is an assistant message that declares at least one tool call. */
export function hasToolCalls(message: Message): boolean {
  return message.role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
}

/** The plain text of a content value: the string itself, or the text parts joined by newlines. */
export function textOf(content: Content | undefined): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (part !== null && typeof part === 'object' && typeof part.text === 'string') {
      text = text === '' ? part.text : `${text}\n${part.text}`;
    }
  }
  return text;
}

/** True when content carries nothing a provider would count: null, absent, '', [] or only empty text parts. */
export function isEmptyContent(content: Content | undefined): boolean {
  if (content === null || content === undefined) return true;
  if (typeof content === 'string') return content.length === 0;
  if (!Array.isArray(content)) return false;
  for (const part of content) {
    if (part === null || typeof part !== 'object') continue;
    if (part.type !== 'text') return false;
    if (typeof part.text === 'string' && part.text.length > 0) return false;
  }
  return true;
}

/** True when a value has the shape of a message: an object with a string role. */
export function isMessage(value: unknown): value is Message {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && typeof (value as { role?: unknown }).role === 'string';
}
