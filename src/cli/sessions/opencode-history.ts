import type { ContentPart, Message } from '../../core/messages.js';
import { isRecord } from './align-repaired.js';

/**
 * OpenCode's session as it keeps it: messages (`{id, role, …}`, the `message` table's `data` with its id) and
 * their parts (`{id, type, …}`, the `part` table's `data` with its id), parts in id order. `opencode export`
 * writes the same shape: `{info, messages: [{info, parts}]}`.
 */
export interface OpenCodeMessage {
  info: Record<string, unknown>;
  parts: Record<string, unknown>[];
}

/** Where a chat message came from: its OpenCode message, and the parts that make it up. */
export interface ChatSource {
  messageId: string;
  /** For an assistant message: the tool part behind each of its `tool_calls`, in order. */
  callParts: string[];
  /** For a tool message: the tool part it is the result of. */
  resultPart?: string;
  /** The text parts (and others) whose content it carries: a change to them cannot be written back. */
  otherParts: string[];
}

/** What OpenCode sends in place of a tool's result it never got (it rebuilds this itself on every request). */
export const INTERRUPTED = '[Tool execution was interrupted]';
/** What OpenCode sends in place of a result it compacted away. */
export const CLEARED = '[Old tool result content cleared]';

/**
 * The chat history OpenCode 1.18 sends for a session on the chat-completions wire (`@ai-sdk/openai-compatible`),
 * less its system prompt, as read from its source (packages/opencode/src/session/message-v2.ts,
 * `toModelMessages`, then the AI SDK's `convertToModelMessages` and the openai-compatible provider):
 *
 * - a message with no parts is skipped; an assistant message with an `error` is skipped unless it was aborted
 *   and has parts besides step-start and reasoning;
 * - a user message: its text parts (not `ignored`), a compaction part as "What did we do so far?", a subtask
 *   part as "The following tool was executed by the user"; files other than text/plain and directories as
 *   `image_url`/file parts. One text part is sent as a string;
 * - an assistant message is cut at each `step-start` part into steps; each step is one assistant message (its
 *   text parts joined, its tool parts as `tool_calls` with `id: callID`, `arguments: JSON(state.input)`),
 *   then one tool message per tool part: a completed part's `state.output` (or the "cleared" marker when
 *   compacted), an error part's `state.error`, and for a pending or running part the "interrupted" marker.
 * - a step's reasoning parts go as `reasoning_content` (their text joined) when there is any text; for a model whose
 *   id names DeepSeek, OpenCode's ProviderTransform gives every assistant message a `reasoning_content`, empty
 *   when the step had none (provider/transform.ts `message`, and the `interleaved` field it reads);
 * - steps with nothing in them are dropped.
 *
 * Not modelled (the history read then differs from the one sent, and the decision record says so): the call-id
 * rewriting OpenCode does for Claude and Mistral model ids, the "Done." message it adds for Mistral, and the
 * Anthropic, Google and other native wires.
 *
 * Shown as seen on the wire with the 1.18.33 binary against the emulator (test/fixtures/agents/opencode/).
 */
export function toOpenCodeChat(
  history: readonly OpenCodeMessage[],
  options: { model?: string } = {},
): { messages: Message[]; sources: ChatSource[] } {
  const interleaved = options.model?.toLowerCase().includes('deepseek') === true;
  const messages: Message[] = [];
  const sources: ChatSource[] = [];
  for (const message of history) {
    const info = message.info;
    const messageId = typeof info['id'] === 'string' ? info['id'] : '';
    if (message.parts.length === 0) continue;
    if (info['role'] === 'user') {
      const content: ContentPart[] = [];
      const used: string[] = [];
      for (const part of message.parts) {
        const piece = userPiece(part);
        if (piece === undefined) continue;
        content.push(piece);
        used.push(partId(part));
      }
      if (content.length === 0) continue;
      const only = content[0] as ContentPart;
      messages.push({
        role: 'user',
        content: content.length === 1 && only.type === 'text' ? (only['text'] as string) : content,
      });
      sources.push({ messageId, callParts: [], otherParts: used });
      continue;
    }
    if (info['role'] !== 'assistant' || isSkippedAssistant(message)) continue;
    for (const step of steps(message.parts)) {
      const texts = step.filter((part) => part['type'] === 'text' && typeof part['text'] === 'string');
      const tools = step.filter(isToolPart);
      const reasoning = step
        .filter((part) => part['type'] === 'reasoning' && typeof part['text'] === 'string')
        .map((part) => part['text'] as string)
        .join('');
      if (texts.length === 0 && tools.length === 0 && reasoning === '') continue;
      const assistant: Message = { role: 'assistant', content: texts.map((part) => part['text'] as string).join('') };
      if (tools.length > 0)
        assistant.tool_calls = tools.map((part) => ({
          id: part['callID'] as string,
          type: 'function',
          function: { name: part['tool'] as string, arguments: JSON.stringify(stateOf(part)['input'] ?? {}) },
        }));
      if (reasoning !== '' || interleaved) assistant.reasoning_content = reasoning;
      messages.push(assistant);
      sources.push({ messageId, callParts: tools.map(partId), otherParts: texts.map(partId) });
      for (const part of tools) {
        messages.push({ role: 'tool', tool_call_id: part['callID'] as string, content: resultOf(part) });
        sources.push({ messageId, callParts: [], resultPart: partId(part), otherParts: [] });
      }
    }
  }
  return { messages, sources };
}

export function isToolPart(part: Record<string, unknown>): boolean {
  return part['type'] === 'tool' && typeof part['callID'] === 'string' && typeof part['tool'] === 'string';
}

export function partId(part: Record<string, unknown>): string {
  return typeof part['id'] === 'string' ? part['id'] : '';
}

function stateOf(part: Record<string, unknown>): Record<string, unknown> {
  return isRecord(part['state']) ? part['state'] : {};
}

/** What the tool message of a tool part carries. */
export function resultOf(part: Record<string, unknown>): string {
  const state = stateOf(part);
  const time = isRecord(state['time']) ? state['time'] : {};
  if (state['status'] === 'completed')
    return time['compacted'] !== undefined && time['compacted'] !== null ? CLEARED : String(state['output'] ?? '');
  if (state['status'] === 'error') {
    const metadata = isRecord(state['metadata']) ? state['metadata'] : {};
    if (metadata['interrupted'] === true && typeof metadata['output'] === 'string') return metadata['output'];
    return String(state['error'] ?? '');
  }
  return INTERRUPTED;
}

function userPiece(part: Record<string, unknown>): ContentPart | undefined {
  if (part['type'] === 'text' && typeof part['text'] === 'string' && part['ignored'] !== true)
    return { type: 'text', text: part['text'] };
  if (part['type'] === 'compaction') return { type: 'text', text: 'What did we do so far?' };
  if (part['type'] === 'subtask') return { type: 'text', text: 'The following tool was executed by the user' };
  if (part['type'] === 'file' && typeof part['mime'] === 'string') {
    if (part['mime'] === 'text/plain' || part['mime'] === 'application/x-directory') return undefined;
    return part['mime'].startsWith('image/')
      ? { type: 'image_url', image_url: { url: String(part['url'] ?? '') } }
      : { type: 'file', file: { filename: String(part['filename'] ?? ''), file_data: String(part['url'] ?? '') } };
  }
  return undefined;
}

function isSkippedAssistant(message: OpenCodeMessage): boolean {
  const error = message.info['error'];
  if (error === undefined || error === null) return false;
  const aborted = isRecord(error) && error['name'] === 'MessageAbortedError';
  return !(aborted && message.parts.some((part) => part['type'] !== 'step-start' && part['type'] !== 'reasoning'));
}

/** The parts of an assistant message cut at each step-start (the AI SDK's blocks). */
function steps(parts: readonly Record<string, unknown>[]): Record<string, unknown>[][] {
  const out: Record<string, unknown>[][] = [[]];
  for (const part of parts) {
    if (part['type'] === 'step-start') {
      if ((out.at(-1) as Record<string, unknown>[]).length > 0) out.push([]);
      continue;
    }
    (out.at(-1) as Record<string, unknown>[]).push(part);
  }
  return out;
}
