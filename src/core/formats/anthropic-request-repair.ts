import type { Change } from '../changes.js';
import type { RepairOptions } from '../options.js';
import { isToolResultBlock, isToolUseBlock } from './anthropic-messages.js';
import { supportsPrefill } from './anthropic-model.js';
import {
  finalAssistantIndex,
  isThinkingBlock,
  prefillIndex,
  prefillTail,
  TOOL_USE_ID,
} from './anthropic-request-rules.js';
import { type NativeEntry, preview } from './core-pass.js';
import { isRecord } from './native-tag.js';

/**
 * The repairs of the rules in anthropic-request-rules.ts. Signed thinking blocks are never edited
 * or invented: they are only put first (the order the API wants, CATALOGUE
 * anthropic/thinking-block-not-first) or left out where the request cannot take them (thinking
 * disabled, a prefill ending with one). Generated ids are a function of the id they replace, so the
 * same request always repairs to the same ids and a prompt cache keeps matching.
 */

/**
 * For each tool_use id that breaks the API's pattern, its replacement: the id with every other
 * character made `_`, at most 64 long, and suffixed with a hash of the original id where that
 * would meet an id already in the request. Valid ids are never touched.
 */
export function idRemapping(input: readonly unknown[]): Map<string, string> {
  const bad: string[] = [];
  const taken = new Set<string>();
  for (const message of input) {
    if (!isRecord(message) || !Array.isArray(message['content'])) continue;
    for (const block of message['content']) {
      const id = isToolUseBlock(block) ? block['id'] : isToolResultBlock(block) ? block['tool_use_id'] : undefined;
      if (typeof id !== 'string' || id === '') continue;
      if (TOOL_USE_ID.test(id)) taken.add(id);
      else if (isToolUseBlock(block)) bad.push(id);
    }
  }
  const remapped = new Map<string, string>();
  for (const id of bad) {
    if (remapped.has(id)) continue;
    const base = id.replace(/[^a-zA-Z0-9_-]/g, '_');
    let made = base.length <= 64 ? base : `${base.slice(0, 55)}_${hash(id)}`;
    for (let salt = 0; taken.has(made); salt += 1) made = `${base.slice(0, 46)}_${hash(`${salt}:${id}`)}`;
    taken.add(made);
    remapped.set(id, made);
  }
  return remapped;
}

/** FNV-1a, 32 bits, as 8 hex digits: deterministic, and the core has no crypto. */
function hash(text: string): string {
  let value = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    value ^= text.charCodeAt(index);
    value = Math.imul(value, 0x01000193) >>> 0;
  }
  return value.toString(16).padStart(8, '0');
}

/** The fixes of one message's blocks: each block that has to change is rebuilt, the others kept as they are. */
export function fixBlocks(
  message: Record<string, unknown>,
  origin: number,
  remapped: ReadonlyMap<string, string>,
  changes: Change[],
): Record<string, unknown> {
  const content = message['content'];
  const role = message['role'];
  if (!Array.isArray(content) || (role !== 'user' && role !== 'assistant')) return message;
  let changed = false;
  const out = content.map((block) => {
    const fixed = fixBlock(block, role, origin, remapped, changes);
    if (fixed !== block) changed = true;
    return fixed;
  });
  let blocks = out;
  if (role === 'assistant' && blocks.some(isThinkingBlock) && !isThinkingBlock(blocks[0])) {
    // CATALOGUE anthropic/thinking-block-not-first: the thinking blocks first, each as it was, the rest in order.
    blocks = [...blocks.filter(isThinkingBlock), ...blocks.filter((block) => !isThinkingBlock(block))];
    changed = true;
    changes.push({
      kind: 'blocks-reordered',
      index: origin,
      detail:
        'thinking blocks moved to the front, unchanged: an assistant message that has thinking blocks must open with one',
    });
  }
  return changed ? { ...message, content: blocks } : message;
}

function fixBlock(
  block: unknown,
  role: 'user' | 'assistant',
  origin: number,
  remapped: ReadonlyMap<string, string>,
  changes: Change[],
): unknown {
  if (role === 'user' && isToolUseBlock(block)) {
    // CATALOGUE anthropic/tool-use-wrong-role: a call in a user message was never the model's; kept as text.
    const id = typeof block['id'] === 'string' ? block['id'] : undefined;
    const name = typeof block['name'] === 'string' ? block['name'] : 'unnamed';
    changes.push({
      kind: 'call-to-text',
      index: origin,
      ...(id === undefined ? {} : { toolCallId: id }),
      detail: `tool_use block ${preview(block)} in a user message kept as text: tool_use blocks can only be in assistant messages`,
    });
    return {
      type: 'text',
      text: `[unstuck: a tool call${id === undefined ? '' : ` (tool_use ${id})`} to ${name} stood in a user message, where the API does not take one, so it is kept as text] input: ${JSON.stringify(block['input'] ?? {})}`,
    };
  }
  if (role === 'assistant' && isToolResultBlock(block)) {
    const id = typeof block['tool_use_id'] === 'string' ? block['tool_use_id'] : undefined;
    const result = block['content'];
    changes.push({
      kind: 'call-to-text',
      index: origin,
      ...(id === undefined ? {} : { toolCallId: id }),
      detail: `tool_result block ${preview(block)} in an assistant message kept as text: tool_result blocks can only be in user messages`,
    });
    return {
      type: 'text',
      text: `[unstuck: a tool result${id === undefined ? '' : ` (tool_use_id ${id})`} stood in an assistant message, so it is kept as text] ${typeof result === 'string' ? result : JSON.stringify(result ?? '')}`,
    };
  }
  if (role !== 'assistant' || !isToolUseBlock(block)) {
    if (!isToolResultBlock(block)) return block;
    const id = block['tool_use_id'];
    const renamed = typeof id === 'string' ? remapped.get(id) : undefined;
    if (renamed === undefined) return block;
    changes.push({
      kind: 'id-remapped',
      index: origin,
      toolCallId: id as string,
      detail: `tool_result.tool_use_id ${String(id)} -> ${renamed}, as its call's`,
    });
    return { ...block, tool_use_id: renamed };
  }
  let fixed = block;
  const id = block['id'];
  const renamed = typeof id === 'string' ? remapped.get(id) : undefined;
  if (renamed !== undefined) {
    changes.push({
      kind: 'id-remapped',
      index: origin,
      toolCallId: id as string,
      detail: `tool_use.id ${String(id)} -> ${renamed}: ids must match ^[a-zA-Z0-9_-]+$ (the same id always becomes the same one)`,
    });
    fixed = { ...fixed, id: renamed };
  }
  const input = block['input'];
  if (!isRecord(input)) {
    // CATALOGUE anthropic/tool-call-arguments-invalid-json: the JSON text of an object is that object;
    // anything else is kept whole inside one, as the converters keep arguments they cannot read.
    const parsed = typeof input === 'string' ? parseObject(input) : undefined;
    const made =
      parsed ??
      (input === undefined
        ? {}
        : { unstuck_unparsed_arguments: typeof input === 'string' ? input : JSON.stringify(input) });
    changes.push({
      kind: 'arguments-repaired',
      index: origin,
      ...(typeof id === 'string' ? { toolCallId: id } : {}),
      detail: `tool_use.input ${preview(input)} made an object: the API takes only a JSON object`,
    });
    fixed = { ...fixed, input: made };
  }
  return fixed;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The fixes of the final position, on the settled turns: thinking left out of the final assistant
 * message when the request has thinking off, a prefill's trailing thinking left out, a prefill
 * for a model without prefill dropped (level strongest only: it is what the caller wrote), a
 * prefill's trailing whitespace cut.
 */
export function fixFinal(entries: NativeEntry[], options: RepairOptions, changes: Change[]): NativeEntry[] {
  let out = entries;
  const values = () => out.map((entry) => entry.value);
  const noPrefill = supportsPrefill(options.model) === false;
  // Each pass can leave another message in the final position (a prefill dropped, a thinking-only
  // message emptied): again until none goes. A pass that drops nothing ends it, so a few passes at most.
  for (let length = -1; length !== out.length; ) {
    length = out.length;
    let prefill = prefillIndex(values());
    if (prefill >= 0 && noPrefill && options.level === 'strongest') {
      const entry = out[prefill] as NativeEntry;
      changes.push({
        kind: 'prefill-dropped',
        index: entry.origin,
        detail: `final assistant message ${preview((entry.value as Record<string, unknown>)['content'])} dropped: ${String(options.model)} does not support assistant message prefill`,
      });
      out = out.filter((_, position) => position !== prefill);
      continue;
    }
    const final = options.thinking === false ? finalAssistantIndex(values()) : -1;
    if (final >= 0) out = dropBlocks(out, final, changes, 'all', 'the request has thinking disabled');
    prefill = prefillIndex(values());
    if (prefill >= 0) out = dropBlocks(out, prefill, changes, 'trailing', 'a prefill may not end with thinking');
  }
  const prefill = prefillIndex(values());
  if (prefill < 0 || noPrefill) return out;
  const entry = out[prefill] as NativeEntry;
  const message = entry.value as Record<string, unknown>;
  const tail = prefillTail(message);
  if (tail === undefined || tail.trimEnd() === tail) return out;
  const content = message['content'];
  let trimmed: unknown;
  if (typeof content === 'string') trimmed = content.trimEnd();
  else if (Array.isArray(content) && tail.trim() !== '') {
    const last = content[content.length - 1] as Record<string, unknown>;
    trimmed = [...content.slice(0, -1), { ...last, text: tail.trimEnd() }];
  } else return out;
  changes.push({
    kind: 'text-trimmed',
    index: entry.origin,
    detail: 'trailing whitespace cut from the final assistant text: a prefill cannot end with whitespace',
  });
  out = out.slice();
  out[prefill] = { ...entry, value: { ...message, content: trimmed } };
  return out;
}

/** Thinking blocks left out of one message (all of them, or the run it ends with); a message left empty goes too. */
function dropBlocks(
  entries: NativeEntry[],
  at: number,
  changes: Change[],
  which: 'all' | 'trailing',
  why: string,
): NativeEntry[] {
  const entry = entries[at] as NativeEntry;
  const message = entry.value as Record<string, unknown>;
  const content = message['content'];
  if (!Array.isArray(content)) return entries;
  let kept: unknown[];
  if (which === 'all') kept = content.filter((block) => !isThinkingBlock(block));
  else {
    let end = content.length;
    while (end > 0 && isThinkingBlock(content[end - 1])) end -= 1;
    kept = content.slice(0, end);
  }
  if (kept.length === content.length) return entries;
  changes.push({
    kind: 'block-dropped',
    index: entry.origin,
    detail: `${content.length - kept.length} thinking block(s) left out, unchanged and not replaced: ${why}`,
  });
  if (kept.length === 0) {
    changes.push({
      kind: 'empty-message-dropped',
      index: entry.origin,
      detail: 'assistant message with nothing left but the thinking left out',
    });
    return entries.filter((_, position) => position !== at);
  }
  const out = entries.slice();
  out[at] = { ...entry, value: { ...message, content: kept } };
  return out;
}
