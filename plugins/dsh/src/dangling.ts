/**
 * Declared-but-unanswered tool calls at the tail of the surface: the state a crashed dispatch
 * leaves behind (`assistant/message{tool_calls}` -> `tool/call` -> crash -> `turn/end error`).
 * Results for them can still be made adjacent by appending, because nothing but results for
 * that assistant follows it.
 */
import { isResultOnly, isToolResult, type Message, type ToolCallBlock, toolCallsOf } from './host.js';

export interface Dangling {
  /** Index (in the given messages) of the assistant whose calls are open. */
  readonly index: number;
  /** Its calls with no adjacent result, in declaration order. */
  readonly calls: ToolCallBlock[];
}

/** The open calls at the tail of `messages`, or undefined when the tail is closed or not repairable by appending. */
export function findDangling(messages: readonly Message[]): Dangling | undefined {
  let index = messages.length - 1;
  const answered = new Set<string>();
  while (index >= 0) {
    const message = messages[index];
    if (message === undefined || !isResultOnly(message)) break;
    for (const block of message.content) if (isToolResult(block)) answered.add(block.toolCallId);
    index -= 1;
  }
  const assistant = messages[index];
  if (assistant === undefined) return undefined;
  const calls = toolCallsOf(assistant);
  if (calls.length === 0) return undefined;
  const declared = new Set<string>(calls.map((call) => call.id));
  for (const id of answered) if (!declared.has(id)) return undefined;
  // A call with an empty id cannot be answered legally; the heal on a pairing 400 strips it instead.
  const open = calls.filter((call) => call.id !== '' && !answered.has(call.id));
  return open.length === 0 ? undefined : { index, calls: open };
}
