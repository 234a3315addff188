/** The error result the model is shown for a call whose dispatch crashed before producing one. */
import { createToolResultMessage, type ToolResultMessage } from '@deepseek-ai/dsh-llm';
import type { ToolCallBlock } from './host.js';

const REASON_SHOWN = 300;

export function syntheticResult(call: ToolCallBlock, reason: string | undefined): ToolResultMessage {
  const why =
    reason === undefined || reason.length === 0
      ? 'the tool dispatch failed'
      : `the tool dispatch failed: ${reason.slice(0, REASON_SHOWN)}`;
  return createToolResultMessage({
    callId: call.id,
    isError: true,
    content: [
      {
        type: 'text',
        text: `Tool ${call.name || '(unnamed tool)'} did not run to completion (${why}). No result was produced. Decide whether to retry it, use another tool, or tell the user.`,
      },
    ],
  });
}
