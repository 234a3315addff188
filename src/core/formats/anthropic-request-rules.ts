import type { CheckOptions } from '../options.js';
import type { Violation } from '../violation.js';
import { isToolResultBlock, isToolUseBlock } from './anthropic-messages.js';
import { supportsMidConversationSystem, supportsPrefill } from './anthropic-model.js';
import { isRecord } from './native-tag.js';

/**
 * The Anthropic rules that need a block's place in the request, or the request's own settings
 * (model, `thinking`), beside the pairing rules of anthropic-check.ts. Each is worded as the
 * catalogue's errors word it (test/fixtures/shared/rules.json, provider anthropic), so the entry's
 * `match` reads it.
 */
type Report = (violation: Violation) => void;

/** CATALOGUE anthropic/tool-call-id-format (sources: CommandCodeAI/command-code#323, BlockRunAI/ClawRouter#17, LibreChat-AI/agents#153). */
export const TOOL_USE_ID = /^[a-zA-Z0-9_-]+$/;

export function isThinkingBlock(block: unknown): block is Record<string, unknown> {
  return isRecord(block) && (block['type'] === 'thinking' || block['type'] === 'redacted_thinking');
}

/** The rules about the blocks of one message, whatever its place. */
export function checkBlocks(index: number, role: 'user' | 'assistant', content: unknown[], report: Report): void {
  let thinking = false;
  content.forEach((block, position) => {
    if (isThinkingBlock(block)) thinking = true;
    if (role === 'user' && isToolUseBlock(block)) {
      // CATALOGUE anthropic/tool-use-wrong-role (V1ki/dsh-plugin-subscriptions#22).
      report({
        rule: 'tool-use-wrong-role',
        index,
        message: `messages.${index}.content.${position}: \`tool_use\` blocks can only be in \`assistant\` messages`,
      });
    }
    if (role === 'assistant' && isToolResultBlock(block)) {
      // The same catalogue entry's other half ("and tool_result only in user messages"); no text is
      // catalogued for it, so it is worded after the tool_use one.
      report({
        rule: 'tool-use-wrong-role',
        index,
        message: `messages.${index}.content.${position}: \`tool_result\` blocks can only be in \`user\` messages`,
      });
    }
    if (role !== 'assistant' || !isToolUseBlock(block)) return;
    const id = block['id'];
    if (typeof id === 'string' && id !== '' && !TOOL_USE_ID.test(id)) {
      report({
        rule: 'tool-call-id-format',
        index,
        toolCallId: id,
        message: `messages.${index}.content.${position}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`,
      });
    }
    // CATALOGUE anthropic/tool-call-arguments-invalid-json (anthropics/anthropic-sdk-typescript#648,
    // anthropics/claude-code#6696, #6695): input must be an object, not a string, array or null.
    if (!isRecord(block['input'])) {
      report({
        rule: 'tool-call-arguments-invalid-json',
        index,
        ...(typeof id === 'string' ? { toolCallId: id } : {}),
        message: `messages.${index}.content.${position}.tool_use.input: Input should be a valid dictionary`,
      });
    }
  });
  const first = content[0];
  if (role === 'assistant' && thinking && !isThinkingBlock(first)) {
    // CATALOGUE anthropic/thinking-block-not-first (anthropics/claude-code#20705).
    const type = isRecord(first) && typeof first['type'] === 'string' ? first['type'] : 'nothing';
    report({
      rule: 'thinking-block-not-first',
      index,
      message: `messages.${index}.content.0: If an assistant message contains any thinking blocks, the first block must be thinking or redacted_thinking. Found ${type}.`,
    });
  }
}

/**
 * Where a `role: "system"` message may stand. Without a model (or one not read) and on models
 * before mid-conversation system messages, nowhere; on the models that have them, right after a
 * user turn (CATALOGUE anthropic/system-role-in-messages, and anthropic-model.ts for which models).
 */
export function checkSystemRole(input: readonly unknown[], index: number, model: string | undefined, report: Report) {
  const supported = supportsMidConversationSystem(model);
  if (supported === true) {
    const previous = input[index - 1];
    if (isRecord(previous) && previous['role'] === 'user') return;
  }
  report({
    rule: 'system-role-in-messages',
    index,
    message:
      supported === false
        ? `messages.${index}.role: role 'system' is not supported on this model`
        : 'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.',
  });
}

/**
 * The index of the assistant message in the final position: the last message if it is an
 * assistant's, or the assistant message answered by the trailing run of tool-result-only user
 * messages (the current tool loop). -1 when the request ends with a user's own turn.
 */
export function finalAssistantIndex(input: readonly unknown[]): number {
  for (let index = input.length - 1; index >= 0; index -= 1) {
    const message = input[index];
    if (!isRecord(message)) return -1;
    if (message['role'] === 'assistant') return index;
    const content = message['content'];
    if (message['role'] !== 'user' || !Array.isArray(content) || content.length === 0) return -1;
    if (!content.every(isToolResultBlock)) return -1;
  }
  return -1;
}

/** A final assistant message with no tool_use is a prefill (CATALOGUE anthropic/ends-with-assistant, notes). */
export function prefillIndex(input: readonly unknown[]): number {
  const index = input.length - 1;
  const last = input[index];
  if (!isRecord(last) || last['role'] !== 'assistant') return -1;
  const content = last['content'];
  return Array.isArray(content) && content.some(isToolUseBlock) ? -1 : index;
}

/** The text a prefill ends with, or undefined when it does not end with text. */
export function prefillTail(message: Record<string, unknown>): string | undefined {
  const content = message['content'];
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const last: unknown = content[content.length - 1];
  return isRecord(last) && last['type'] === 'text' && typeof last['text'] === 'string' ? last['text'] : undefined;
}

/** The rules about the final position, which depend on the request's model and `thinking`. */
export function checkFinal(input: readonly unknown[], options: CheckOptions, report: Report): void {
  const final = finalAssistantIndex(input);
  if (final >= 0 && options.thinking === false) {
    // CATALOGUE anthropic/thinking-when-disabled (tailcallhq/forgecode#1853, #1195).
    const content = (input[final] as Record<string, unknown>)['content'];
    const position = Array.isArray(content) ? content.findIndex(isThinkingBlock) : -1;
    if (position >= 0)
      report({
        rule: 'thinking-when-disabled',
        index: final,
        message: `messages.${final}.content.${position}: When thinking is disabled, an \`assistant\` message in the final position cannot contain \`thinking\`. To use thinking blocks, enable \`thinking\` in your request.`,
      });
  }
  const prefill = prefillIndex(input);
  if (prefill < 0) return;
  const message = input[prefill] as Record<string, unknown>;
  const content = message['content'];
  if (Array.isArray(content) && isThinkingBlock(content[content.length - 1])) {
    // CATALOGUE anthropic/thinking-final-block (tailcallhq/forgecode#2107).
    report({
      rule: 'thinking-final-block',
      index: prefill,
      message: `messages.${prefill}: The final block in an assistant message cannot be \`thinking\`.`,
    });
  }
  if (supportsPrefill(options.model) === false) {
    // CATALOGUE anthropic/ends-with-assistant; which models: anthropic-model.ts.
    report({
      rule: 'ends-with-assistant',
      index: prefill,
      message: 'This model does not support assistant message prefill. The conversation must end with a user message.',
    });
    return;
  }
  const tail = prefillTail(message);
  if (tail !== undefined && tail !== '' && tail.trimEnd() !== tail) {
    // CATALOGUE anthropic/trailing-whitespace-final-assistant (tailcallhq/forgecode#1872,
    // anomalyco/opencode#1295, aaif-goose/goose#5967). A blank block is text-block-empty's.
    if (typeof content === 'string' || tail.trim() !== '')
      report({
        rule: 'trailing-whitespace-final-assistant',
        index: prefill,
        message: 'messages: final assistant content cannot end with trailing whitespace',
      });
  }
}
