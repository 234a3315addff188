import type { FormatName } from './formats/format-types.js';

const RESPONSES_ITEM_TYPES = new Set([
  'message',
  'function_call',
  'function_call_output',
  'reasoning',
  'item_reference',
  'custom_tool_call',
  'custom_tool_call_output',
  'computer_call',
  'computer_call_output',
  'web_search_call',
  'file_search_call',
  'local_shell_call',
  'local_shell_call_output',
  'mcp_call',
  'mcp_list_tools',
  'mcp_approval_request',
  'mcp_approval_response',
  'image_generation_call',
  'code_interpreter_call',
]);
const ANTHROPIC_BLOCK_TYPES = new Set(['tool_use', 'tool_result', 'thinking', 'redacted_thinking']);

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The wire format of a history (an array) or of a request body (an object holding one), or
 * undefined when it cannot tell: nothing it does not recognise is called one of the formats.
 *
 * A body: `contents` is Gemini's, `input` the Responses API's, `messages` Anthropic's when its
 * messages are (or a top-level `system` says so), else OpenAI chat's. An array: Gemini contents
 * carry `parts` (and no `content`); Responses items a `type` (function_call, message...);
 * Anthropic messages are user/assistant messages with tool_use, tool_result or thinking blocks
 * and no OpenAI fields; OpenAI chat messages are objects with a string `role`. A history of plain
 * text messages reads the same in OpenAI chat and Anthropic Messages: it is OpenAI chat, unless
 * the body says otherwise. Elements that are not objects do not decide (the format's check names
 * them); an empty array, or one with no object in it, is undefined.
 */
export function detectFormat(value: unknown): FormatName | undefined {
  if (Array.isArray(value)) return formatOfItems(value, undefined);
  if (!isRecord(value)) return undefined;
  if (Array.isArray(value['messages'])) return formatOfItems(value['messages'], value);
  if (Array.isArray(value['contents'])) return 'gemini-contents';
  if (Array.isArray(value['input'])) return 'responses-input';
  return undefined;
}

function formatOfItems(items: readonly unknown[], body: Record<string, unknown> | undefined): FormatName | undefined {
  const records = items.filter(isRecord);
  if (records.length === 0) return undefined;
  if (
    records.some((element) => Array.isArray(element['parts'])) &&
    !records.some((element) => 'content' in element || 'type' in element)
  )
    return 'gemini-contents';
  if (
    records.some((element) => typeof element['type'] === 'string' && RESPONSES_ITEM_TYPES.has(element['type'])) &&
    records.every((element) => typeof element['type'] === 'string' || typeof element['role'] === 'string') &&
    !records.some(hasAnthropicBlocks)
  )
    return 'responses-input';
  const plainRoles = records.every(
    (element) =>
      (element['role'] === 'user' || element['role'] === 'assistant') &&
      !('tool_calls' in element) &&
      !('tool_call_id' in element),
  );
  if (plainRoles && (records.some(hasAnthropicBlocks) || (body !== undefined && 'system' in body)))
    return 'anthropic-messages';
  if (records.every((element) => typeof element['role'] === 'string')) return 'openai-chat';
  return undefined;
}

function hasAnthropicBlocks(element: Record<string, unknown>): boolean {
  const content = element['content'];
  return (
    Array.isArray(content) &&
    content.some(
      (block) => isRecord(block) && typeof block['type'] === 'string' && ANTHROPIC_BLOCK_TYPES.has(block['type']),
    )
  );
}
