import type { Change } from '../changes.js';
import type { CheckOptions } from '../options.js';
import type { Violation } from '../violation.js';
import type { NativeEntry } from './core-pass.js';
import { isRecord } from './native-tag.js';
import { callRef, isReasoningModelOutput } from './responses-calls.js';
import { isMessageItem, itemType } from './responses-input.js';

/**
 * The Responses rules that depend on the request's model or its endpoint, beside the pairing rules
 * of responses-check.ts. Worded as the catalogue's errors word them (test/fixtures/shared/rules.json,
 * provider openai-responses), so the entry's `match` reads them.
 */

/**
 * Whether the model is one of OpenAI's reasoning families (o1, o3, o4-mini, codex-mini, gpt-5 and
 * its point releases and codex variants), false for the chat families before them (gpt-4o,
 * gpt-4.1, gpt-4, gpt-3.5, gpt-5-chat-latest), undefined for an id this does not read (a gateway
 * alias, a fine-tune).
 */
export function isReasoningModel(model: string | undefined): boolean | undefined {
  if (model === undefined) return undefined;
  const id = model.toLowerCase().replace(/^.*\//, '');
  if (/^(?:gpt-4|gpt-3\.5|chatgpt-4o)|^gpt-5(?:\.\d+)?-chat/.test(id)) return false;
  if (/^(?:o[1-9](?:$|-)|codex-mini|gpt-5(?:$|[.-]))/.test(id)) return true;
  return undefined;
}

/**
 * CATALOGUE openai-responses/reasoning-item-missing (continuedev/continue#10018, #12620,
 * cline/cline#12242): "Only applies to reasoning models when items carry server ids (fc_/msg_);
 * dropping the ids or including the rs_ item avoids it." The request shows which items carry a
 * server id and whether a reasoning item comes before them in the same model turn (the items one
 * response produced: reasoning, assistant messages and calls, in a row). It does not show whether
 * the API produced that item with reasoning (only the API's store knows), and a history whose
 * items carry ids without reasoning is valid wherever they were not (a step of a reasoning model
 * that returned none, a switch of model): flagging it on the first pass would rewrite valid
 * requests. So the rule is checked at level 'strongest', the heal's, after the API named it, on any
 * model not known to be a chat model; the repair (the id dropped) loses none of the item's content.
 */
function checksReasoningItems(options: CheckOptions): boolean {
  return options.level === 'strongest' && isReasoningModel(options.model) !== false;
}

/** The server id of an item that needs its reasoning item: an fc_ call or an msg_ assistant message. */
export function serverIdNeedingReasoning(item: unknown): string | undefined {
  if (!isRecord(item)) return undefined;
  const id = item['id'];
  if (typeof id !== 'string') return undefined;
  if (itemType(item) === 'function_call' && id.startsWith('fc_')) return id;
  if (isMessageItem(item) && item['role'] === 'assistant' && id.startsWith('msg_')) return id;
  return undefined;
}

/** The reasoning items' positions the model turn of each item starts from: -1 where none came before it in its turn. */
function reasoningBefore(input: readonly unknown[]): number[] {
  const out: number[] = [];
  let last = -1;
  input.forEach((item, index) => {
    if (itemType(item) === 'reasoning') last = index;
    else if (!isReasoningModelOutput(item)) last = -1;
    out.push(last);
  });
  return out;
}

/** System messages on the Codex subscription backend (CATALOGUE openai-responses/system-role-unsupported). */
const refusesSystem = (options: CheckOptions) => options.endpoint === 'chatgpt-codex' || options.level === 'strongest';

export function checkResponsesRequest(
  input: readonly unknown[],
  options: CheckOptions,
  report: (violation: Violation) => void,
) {
  const reasoningItems = checksReasoningItems(options);
  const before = reasoningItems ? reasoningBefore(input) : [];
  input.forEach((item, index) => {
    if (refusesSystem(options) && isMessageItem(item) && item['role'] === 'system')
      // CATALOGUE openai-responses/system-role-unsupported (router-for-me/CLIProxyAPI#3510): the body is
      // {"detail":"System messages are not allowed"}.
      report({ rule: 'system-role-unsupported', index, message: 'System messages are not allowed' });
    if (!reasoningItems) return;
    const id = serverIdNeedingReasoning(item);
    if (id === undefined || (before[index] ?? -1) >= 0) return;
    const type = itemType(item);
    report({
      rule: 'reasoning-item-missing',
      index,
      ...(callRef(item) === undefined ? {} : { toolCallId: id }),
      message: `Item '${id}' of type '${type}' was provided without its required 'reasoning' item.`,
    });
  });
}

/**
 * Their repairs: the server id dropped from an item whose reasoning item is not with it (the id is
 * optional on input; the item's content, call_id and arguments stay, so nothing the model said is
 * lost), and a system message sent as a developer message (the instructions role the Responses API
 * has beside it) where the endpoint refuses system messages.
 */
export function fixResponsesRequest(entries: NativeEntry[], options: CheckOptions, changes: Change[]): NativeEntry[] {
  const values = entries.map((entry) => entry.value);
  const reasoningItems = checksReasoningItems(options);
  const before = reasoningItems ? reasoningBefore(values) : [];
  let out: NativeEntry[] | undefined;
  entries.forEach((entry, position) => {
    let value = entry.value as Record<string, unknown>;
    if (refusesSystem(options) && isMessageItem(value) && value['role'] === 'system') {
      value = { ...value, role: 'developer' };
      changes.push({
        kind: 'role-renamed',
        index: entry.origin,
        detail: 'system message sent as a developer message: this endpoint does not allow system messages in input',
      });
    }
    const id = reasoningItems ? serverIdNeedingReasoning(value) : undefined;
    if (id !== undefined && (before[position] ?? -1) < 0) {
      const { id: _id, ...rest } = value;
      value = rest;
      changes.push({
        kind: 'field-removed',
        index: entry.origin,
        toolCallId: id,
        detail: `server id ${id} removed: the reasoning item it was produced with is not in the input, and the API requires it with the id (the item's content is kept)`,
      });
    }
    if (value === entry.value) return;
    out ??= entries.slice();
    out[position] = { ...entry, value };
  });
  return out ?? entries;
}
