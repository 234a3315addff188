import type { Change } from '../changes.js';
import type { RepairOptions, RepairResult } from '../options.js';
import type { RuleId } from '../rule-ids.js';
import { type NativeEntry, preview, repairThroughCore } from './core-pass.js';
import {
  checkGeminiContents,
  countCalls,
  countResponses,
  finalModelTurn,
  isDatalessPart,
  isEmptyTextPart,
} from './gemini-check.js';
import { buildGeminiContents, callOf, fromGeminiContents, roleOf } from './gemini-contents.js';
import { geminiFinalTurn } from './gemini-model.js';
import { isRecord } from './native-tag.js';
import { pairingProfile } from './pairing-profile.js';

/** What the core's pairing repair fixes; the rest is fixed on the native form. */
const PAIRING = new Set<RuleId>([
  'tool-calls-unanswered',
  'tool-result-orphan',
  'tool-results-excess',
  'tool-call-turn-position',
]);

const WHY: Partial<Record<RuleId, string>> = {
  'role-unknown': "the role has no equivalent in contents (system text belongs in the request's systemInstruction)",
  'empty-messages': 'there are no contents to send',
  'ends-with-assistant':
    "the final model turn is the caller's prefill, which this model does not take; it is dropped at level 'strongest' only",
};

const RENAMED: Record<string, string> = { assistant: 'model', tool: 'user', function: 'user' };

/**
 * Gemini contents repaired: roles the API does not know mapped to user/model, empty text parts and
 * parts without data dropped, empty turns dropped, a call turn after a model turn merged into it,
 * a call turn with nothing before it kept as user text; then the core's pairing repair on the
 * converted form (responses moved next to their call turn, error responses for unanswered calls,
 * orphan responses kept as text). Repeated until the contents settle (twice at most in practice).
 */
export function repairGeminiContents(input: readonly unknown[], options: RepairOptions = {}): RepairResult<unknown> {
  if (checkGeminiContents(input, options).length === 0)
    return { messages: input as unknown[], changes: [], remaining: [], changed: false };
  const changes: Change[] = [];
  let entries: NativeEntry[] = [];
  input.forEach((value, origin) => {
    if (!isRecord(value))
      changes.push({ kind: 'malformed-dropped', index: origin, detail: `not a content object: ${preview(value)}` });
    else entries.push({ value, origin });
  });
  for (let round = 0; round < 3; round += 1) {
    entries = settleTurns(entries, options, changes);
    entries = repairThroughCore(
      entries,
      { from: fromGeminiContents, build: buildGeminiContents },
      {
        profile: pairingProfile('openai', false),
        unanswered: options.unanswered ?? 'synthesize',
        orphans: options.orphans ?? 'to-user',
      },
      changes,
      (values) => ({
        damaged: checkGeminiContents(values)
          .filter((violation) => PAIRING.has(violation.rule))
          .map((violation) => violation.index),
        whole: false,
        opensBlock: (value) => isRecord(value) && roleOf(value) === 'model' && countCalls(value) > 0,
      }),
    );
    if (checkGeminiContents(entries.map((entry) => entry.value)).every((violation) => violation.rule in WHY)) break;
  }
  entries = dropPrefill(entries, options, changes);
  const messages = changes.length === 0 ? (input as unknown[]) : entries.map((entry) => entry.value);
  const remaining = checkGeminiContents(messages, options).map((violation) => ({
    ...violation,
    why: WHY[violation.rule] ?? 'no repair strategy covers this case',
  }));
  return { messages, changes, remaining, changed: changes.length > 0 };
}

function settleTurns(entries: NativeEntry[], options: RepairOptions, changes: Change[]): NativeEntry[] {
  const out: NativeEntry[] = [];
  // The last turn out: whether it holds responses, and its parts once turns were merged into it (an
  // array of our own, appended to in place: copying it per merge is quadratic in a run of 10^5 turns).
  let lastResponds: boolean | undefined;
  let lastParts: unknown[] | undefined;
  const push = (entry: NativeEntry) => {
    out.push(entry);
    lastResponds = undefined;
    lastParts = undefined;
  };
  const mergeInto = (previous: NativeEntry, parts: unknown[]) => {
    if (lastParts === undefined) {
      lastParts = ((previous.value as Record<string, unknown>)['parts'] as unknown[]).slice();
      previous.value = { ...(previous.value as Record<string, unknown>), parts: lastParts };
    }
    for (const part of parts) lastParts.push(part);
  };
  for (const entry of entries) {
    let content = entry.value as Record<string, unknown>;
    const role = content['role'];
    if (typeof role === 'string' && RENAMED[role] !== undefined) {
      content = { ...content, role: RENAMED[role] };
      changes.push({
        kind: 'role-renamed',
        index: entry.origin,
        detail: `role '${role}' is not a Gemini role; sent as '${RENAMED[role]}'`,
      });
    }
    const parts = Array.isArray(content['parts']) ? (content['parts'] as unknown[]) : [];
    const kept = parts.filter((part) => !isDatalessPart(part) && !isEmptyTextPart(part));
    if (kept.length !== parts.length) {
      content = { ...content, parts: kept };
      changes.push({
        kind: 'block-dropped',
        index: entry.origin,
        detail: `${parts.length - kept.length} part(s) with no data or empty text dropped`,
      });
    }
    if (kept.length === 0) {
      changes.push({
        kind: 'empty-message-dropped',
        index: entry.origin,
        detail: `${String(roleOf(content))} turn with no parts`,
      });
      continue;
    }
    const previous = out[out.length - 1];
    if (
      previous !== undefined &&
      roleOf(content) === 'user' &&
      countResponses(content) > 0 &&
      roleOf(previous.value as Record<string, unknown>) === 'user' &&
      // biome-ignore lint/suspicious/noAssignInExpressions: counted once per kept turn, and only when the cheaper tests pass
      (lastResponds ??= countResponses(previous.value) > 0)
    ) {
      // Parallel responses split over consecutive turns: Gemini wants them in the one turn after the calls.
      mergeInto(previous, kept);
      changes.push({
        kind: 'messages-merged',
        index: entry.origin,
        detail: `function response turn merged into the response turn before it (input index ${previous.origin})`,
      });
      if (previous.added !== true)
        changes.push({
          kind: 'messages-merged',
          index: previous.origin,
          detail: `received the responses of the turn at input index ${entry.origin}, which followed it`,
        });
      continue;
    }
    if (roleOf(content) === 'model' && countCalls(content) > 0) {
      if (previous === undefined) {
        // Nothing before the call turn to have asked for it (a sliced history): its calls are kept as text.
        if (options.orphans === 'drop') {
          changes.push({
            kind: 'orphan-dropped',
            index: entry.origin,
            detail: `call turn with nothing before it dropped: ${preview(content['parts'])}`,
          });
          continue;
        }
        push({ ...entry, value: callsAsText(content) });
        changes.push({
          kind: 'call-to-text',
          index: entry.origin,
          detail:
            'a function call turn cannot open the contents; the turn is kept as user text, and its responses become orphans',
        });
        continue;
      }
      if (roleOf(previous.value as Record<string, unknown>) === 'model') {
        mergeInto(previous, kept);
        lastResponds = undefined; // the merged turn is a model turn; a later response turn asks again
        changes.push({
          kind: 'messages-merged',
          index: entry.origin,
          detail: `function call turn merged into the model turn before it (input index ${previous.origin}): a call turn must follow a user turn`,
        });
        changes.push({
          kind: 'messages-merged',
          index: previous.origin,
          detail: `received the parts of the function call turn at input index ${entry.origin}, which followed it`,
        });
        continue;
      }
    }
    push(content === entry.value ? entry : { ...entry, value: content });
  }
  return out;
}

function callsAsText(content: Record<string, unknown>): Record<string, unknown> {
  const lines = ((content['parts'] as unknown[]) ?? []).map((part) => {
    const found = callOf(part);
    if (found !== undefined)
      return `${String(found.call['name'])}(${JSON.stringify(found.call['args'] ?? {})})${typeof found.call['id'] === 'string' ? ` [id ${found.call['id']}]` : ''}`;
    return isRecord(part) && typeof part['text'] === 'string' ? part['text'] : JSON.stringify(part);
  });
  const { parts: _parts, ...rest } = content;
  return {
    ...rest,
    role: 'user',
    parts: [
      {
        text: `[unstuck: the model made the call(s) below, but the turn that led to them is not in this history, so they are kept as text]\n${lines.join('\n')}`,
      },
    ],
  };
}

/**
 * A final model turn dropped for a model that takes no prefill, at level 'strongest' only (it is
 * what the caller wrote, as anthropic-request-repair.ts drops an Anthropic prefill). Again while
 * another model turn is left last.
 */
function dropPrefill(entries: NativeEntry[], options: RepairOptions, changes: Change[]): NativeEntry[] {
  const verdict = geminiFinalTurn(options.model);
  if (options.level !== 'strongest' || verdict === undefined || verdict === 'prefill') return entries;
  let out = entries;
  for (;;) {
    const final = finalModelTurn(out.map((entry) => entry.value));
    if (final < 0 || out.length === 1) return out;
    const entry = out[final] as NativeEntry;
    changes.push({
      kind: 'prefill-dropped',
      index: entry.origin,
      detail: `final model turn ${preview((entry.value as Record<string, unknown>)['parts'])} dropped: ${String(options.model)} does not take a request ending with a model turn`,
    });
    out = out.slice(0, final);
  }
}
