/**
 * The text a surface replacement puts where a tool call or a tool result was: a note naming the
 * calls taken out of an assistant, and a result turned into user text. Both planners write them.
 */
import { type ContentBlock, isToolResult, type Message, type ToolCallBlock } from './host.js';

const ARGUMENTS_SHOWN = 400;

function clip(text: string): string {
  return text.length <= ARGUMENTS_SHOWN ? text : `${text.slice(0, ARGUMENTS_SHOWN)}…`;
}

export function textOf(blocks: readonly ContentBlock[]): string {
  let text = '';
  for (const block of blocks) if (block.type === 'text') text += block.text;
  return text;
}

export function callNote(calls: readonly ToolCallBlock[], why: 'unanswered' | 'balance'): string {
  const lines = calls.map(
    (call) => `- ${call.name || '(unnamed tool)'} (id ${call.id || '(empty)'}) with arguments ${clip(call.arguments)}`,
  );
  const tail =
    why === 'unanswered'
      ? 'These tool calls never completed (the tool dispatch failed before producing a result), so they were taken out of the request.'
      : 'These tool calls are kept here as text; their results follow as text.';
  return `[unstuck] ${tail}\n${lines.join('\n')}`;
}

export function neutralised(message: Message): ContentBlock[] {
  const content: ContentBlock[] = [];
  for (const block of message.content) {
    if (isToolResult(block)) {
      const status = block.isError === true ? 'error result' : 'result';
      content.push({
        type: 'text',
        text: `[unstuck] Tool ${status} for call ${block.toolCallId || '(empty id)'}:\n${textOf(block.content) || '(no output)'}`,
      });
    } else {
      content.push(block);
    }
  }
  return content;
}
