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
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    typeof (value as { role?: unknown }).role === 'string'
  );
}

/**
 * Content part types a chat-completions provider or gateway takes. OpenAI's chat API takes text,
 * image_url, input_audio and file parts (refusal and audio on assistant turns); vLLM and Qwen add
 * video_url; gateways carrying other wire formats pass on Anthropic-style (image, document,
 * tool_use, tool_result, thinking, redacted_thinking) and Responses-style (input_*, output_text)
 * parts (corpus 043). Any other type is rejected: OpenAI answers "Invalid value: '...'. Supported
 * values are: 'text', 'image_url', 'input_audio', 'refusal', 'audio', and 'file'."
 */
const PART_TYPES: ReadonlySet<string> = new Set([
  'text',
  'image_url',
  'input_audio',
  'file',
  'refusal',
  'audio',
  'video_url',
  'image',
  'document',
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
  'input_text',
  'input_image',
  'input_file',
  'output_text',
]);

/** What is wrong with a message's shape: where (a path under the message) and what was there; undefined when nothing. */
export interface ShapeProblem {
  path: string;
  got: string;
}

/**
 * Why an entry of a messages array cannot be deserialised by any provider, or undefined when it
 * can: not an object with a string role, or content that is neither a string, null, nor an array
 * of content-part objects of a known type (a text part's text a string).
 */
export function messageShapeProblem(value: unknown): ShapeProblem | undefined {
  if (!isMessage(value)) return { path: '', got: describeValue(value, true) };
  const content: unknown = value.content;
  if (content === undefined || content === null || typeof content === 'string') return undefined;
  if (!Array.isArray(content)) return { path: '.content', got: describeValue(content) };
  for (let position = 0; position < content.length; position += 1) {
    const part: unknown = content[position];
    if (part === null || typeof part !== 'object' || Array.isArray(part))
      return { path: `.content[${position}]`, got: describeValue(part) };
    const type = (part as { type?: unknown }).type;
    if (typeof type !== 'string')
      return { path: `.content[${position}].type`, got: type === undefined ? 'no type' : describeValue(type) };
    if (!PART_TYPES.has(type))
      return { path: `.content[${position}].type`, got: `'${type.length > 40 ? `${type.slice(0, 37)}...` : type}'` };
    if (type === 'text' && typeof (part as { text?: unknown }).text !== 'string')
      return { path: `.content[${position}].text`, got: describeValue((part as { text?: unknown }).text) };
  }
  return undefined;
}

function describeValue(value: unknown, entry = false): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return entry ? 'an object without a string role' : 'an object';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  return typeof value;
}
