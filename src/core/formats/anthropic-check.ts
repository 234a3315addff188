import type { CheckOptions } from '../options.js';
import type { Violation } from '../violation.js';
import { isToolResultBlock, isToolUseBlock } from './anthropic-messages.js';
import { checkBlocks, checkFinal, checkSystemRole } from './anthropic-request-rules.js';
import { isRecord } from './native-tag.js';

/**
 * The Anthropic Messages rules, worded as the API words them (the rule catalogue,
 * test/fixtures/shared/rules.json, provider anthropic; the texts match the catalogue's `match`
 * patterns). Where the catalogue has no Anthropic text (a second result for one call, a missing
 * id), the wording follows the API's pydantic style and says so in the rule's comment.
 */
const unanswered = (index: number, id: string) =>
  `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${id}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
const orphan = (index: number, position: number, id: string) =>
  `messages.${index}.content.${position}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
const THINKING_DOCS = 'https://docs.claude.com/en/docs/build-with-claude/extended-thinking';

export function checkAnthropicMessages(input: readonly unknown[], options: CheckOptions = {}): Violation[] {
  const violations: Violation[] = [];
  const report = (violation: Violation) => violations.push(violation);
  if (input.length === 0)
    report({ rule: 'empty-messages', index: 0, message: 'messages: messages must have at least one element' });
  const seenIds = new Set<string>();
  // Results found in a later user message of a split run: reported once, as split, not again as orphans.
  const splitResults = new Set<string>();
  const last = input.length - 1;

  for (let index = 0; index < input.length; index += 1) {
    const message = input[index];
    if (!isRecord(message) || typeof message['role'] !== 'string') {
      report({
        rule: 'message-malformed',
        index,
        message: `messages.${index}: Input should be a valid dictionary with a string \`role\``,
      });
      continue;
    }
    const role = message['role'];
    if (role === 'system') {
      checkSystemRole(input, index, options.model, report);
      continue;
    }
    if (role !== 'user' && role !== 'assistant') {
      // CATALOGUE has no text for other roles: pydantic's literal error, as the API's validation words it.
      report({ rule: 'role-unknown', index, message: `messages.${index}.role: Input should be 'user' or 'assistant'` });
      continue;
    }
    const previous = input[index - 1];
    if (isRecord(previous) && previous['role'] === role) {
      report({
        rule: 'roles-not-alternating',
        index,
        message: `messages: roles must alternate between "user" and "assistant", but found multiple "${role}" roles in a row`,
      });
    }
    const content = message['content'];
    const isFinalAssistant = index === last && role === 'assistant';
    if (
      (content === '' ||
        (Array.isArray(content) && content.length === 0) ||
        content === undefined ||
        content === null) &&
      !isFinalAssistant
    ) {
      report({
        rule: 'content-empty',
        index,
        message: `messages.${index}: all messages must have non-empty content except for the optional final assistant message`,
      });
      continue;
    }
    if (!Array.isArray(content)) continue;
    content.forEach((block) => {
      if (!isRecord(block) || block['type'] !== 'text') return;
      const text = block['text'];
      if (typeof text === 'string' && text.trim() !== '') return;
      report({
        rule: 'text-block-empty',
        index,
        message:
          typeof text === 'string' && text !== ''
            ? 'messages: text content blocks must contain non-whitespace text'
            : 'messages: text content blocks must be non-empty',
      });
    });
    checkBlocks(index, role, content, report);
    if (role === 'assistant') checkCalls(input, index, content, seenIds, splitResults, report);
    else checkResults(input, index, content, splitResults, report);
  }
  if (options.thinking === true) checkThinking(input, report);
  checkFinal(input, options, report);
  return violations.sort((a, b) => a.index - b.index);
}

function checkCalls(
  input: readonly unknown[],
  index: number,
  content: unknown[],
  seenIds: Set<string>,
  splitResults: Set<string>,
  report: (violation: Violation) => void,
): void {
  const ids: string[] = [];
  const listed = new Set<string>(); // `ids` as a set: a message may hold 10^5 tool_use blocks
  content.forEach((block, position) => {
    if (!isToolUseBlock(block)) return;
    const id = block['id'];
    if (typeof id !== 'string' || id === '') {
      report({
        rule: 'tool-call-id-missing',
        index,
        message: `messages.${index}.content.${position}.tool_use.id: Field required`,
      });
      return;
    }
    if (seenIds.has(id))
      report({
        rule: 'tool-call-id-duplicate',
        index,
        toolCallId: id,
        message: `messages.${index}.content.${position}: \`tool_use\` ids must be unique`,
      });
    seenIds.add(id);
    if (!listed.has(id)) {
      listed.add(id);
      ids.push(id);
    }
  });
  if (ids.length === 0) return;
  const next = input[index + 1];
  const nextContent =
    isRecord(next) && next['role'] === 'user' && Array.isArray(next['content']) ? (next['content'] as unknown[]) : [];
  const leading = new Set<unknown>();
  for (const block of nextContent) {
    if (!isToolResultBlock(block)) break;
    leading.add(block['tool_use_id']);
  }
  const anywhere = new Set(nextContent.filter(isToolResultBlock).map((block) => block['tool_use_id']));
  let splits: Map<unknown, number> | undefined;
  for (const id of ids) {
    if (leading.has(id)) continue;
    if (anywhere.has(id)) {
      report({ rule: 'tool-result-not-first', index: index + 1, toolCallId: id, message: unanswered(index, id) });
      continue;
    }
    splits ??= splitResultsAfter(input, index + 2);
    const split = splits.get(id) ?? -1;
    if (split >= 0) {
      splitResults.add(`${split}:${id}`);
      report({ rule: 'tool-results-split', index: split, toolCallId: id, message: unanswered(index, id) });
      continue;
    }
    report({ rule: 'tool-calls-unanswered', index, toolCallId: id, message: unanswered(index, id) });
  }
}

/**
 * For each tool_use_id answered in the later user messages of the run of user messages after the
 * call's, the index of the first of them holding it. Built once per assistant message, in one pass
 * over that run, rather than searched once per unanswered call.
 */
function splitResultsAfter(input: readonly unknown[], from: number): Map<unknown, number> {
  const found = new Map<unknown, number>();
  for (let cursor = from; cursor < input.length; cursor += 1) {
    const message = input[cursor];
    if (
      !isRecord(message) ||
      message['role'] !== 'user' ||
      !isRecord(input[cursor - 1]) ||
      (input[cursor - 1] as Record<string, unknown>)['role'] !== 'user'
    )
      break;
    const content = message['content'];
    if (!Array.isArray(content)) continue;
    for (const block of content)
      if (isToolResultBlock(block) && !found.has(block['tool_use_id'])) found.set(block['tool_use_id'], cursor);
  }
  return found;
}

function checkResults(
  input: readonly unknown[],
  index: number,
  content: unknown[],
  splitResults: Set<string>,
  report: (violation: Violation) => void,
): void {
  const previous = input[index - 1];
  const callIds = new Set<unknown>();
  if (isRecord(previous) && previous['role'] === 'assistant' && Array.isArray(previous['content'])) {
    for (const block of previous['content']) if (isToolUseBlock(block)) callIds.add(block['id']);
  }
  const answered = new Set<unknown>();
  content.forEach((block, position) => {
    if (!isToolResultBlock(block)) return;
    const id = block['tool_use_id'];
    if (typeof id !== 'string' || id === '') {
      report({
        rule: 'tool-call-id-missing',
        index,
        message: `messages.${index}.content.${position}.tool_result.tool_use_id: Field required`,
      });
      return;
    }
    if (splitResults.has(`${index}:${id}`)) return;
    if (!callIds.has(id)) {
      // Same text either way; the catalogue tells a result after no calls from one naming a call that is not there.
      report({
        rule: callIds.size > 0 ? 'tool-result-id-mismatch' : 'tool-result-orphan',
        index,
        toolCallId: id,
        message: orphan(index, position, id),
      });
      return;
    }
    if (answered.has(id)) {
      // No catalogued text for a second result: the API rejects it with the orphan wording's family.
      report({ rule: 'tool-result-duplicate', index, toolCallId: id, message: orphan(index, position, id) });
      return;
    }
    answered.add(id);
  });
}

/**
 * With extended thinking on, the assistant message of the current tool loop must open with its
 * signed thinking block (CATALOGUE anthropic/thinking-block-missing). The loop is current when
 * nothing but tool results follows the last assistant message with tool_use.
 */
function checkThinking(input: readonly unknown[], report: (violation: Violation) => void): void {
  for (let index = input.length - 1; index >= 0; index -= 1) {
    const message = input[index];
    if (!isRecord(message)) return;
    const content = message['content'];
    if (message['role'] === 'user') {
      if (!Array.isArray(content) || !content.every(isToolResultBlock)) return;
      continue;
    }
    if (message['role'] !== 'assistant' || !Array.isArray(content) || !content.some(isToolUseBlock)) return;
    const first = content[0];
    const type = isRecord(first) && typeof first['type'] === 'string' ? first['type'] : 'nothing';
    if (type === 'thinking' || type === 'redacted_thinking') return;
    report({
      rule: 'thinking-block-missing',
      index,
      message: `messages.${index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at ${THINKING_DOCS}`,
    });
    return;
  }
}
