import type { Change } from '../../core/changes.js';
import { check } from '../../core/check.js';
import type { Message } from '../../core/messages.js';
import type { RepairOptions } from '../../core/options.js';
import { isProfileName, type ProfileName } from '../../core/profiles.js';
import { repair } from '../../core/repair.js';
import type { Remaining, Violation } from '../../core/violation.js';
import { isRecord } from './align-repaired.js';
import type { ChatSource, OpenCodeMessage } from './opencode-history.js';
import { toOpenCodeChat } from './opencode-history.js';
import type { WritebackPlan } from './opencode-writeback.js';
import { applyEdit, planWriteback } from './opencode-writeback.js';

/** What check and repair found in one OpenCode session, and the part edits the repair comes to. */
export interface OpenCodeAssessment {
  messages: Message[];
  sources: ChatSource[];
  profile: ProfileName;
  model?: string;
  violations: Violation[];
  changes: Change[];
  remaining: Remaining[];
  repaired: readonly unknown[];
  plan: WritebackPlan;
  /** The violations left in the history the rows would hold once the plan is written (what OpenCode then sends). */
  after: Violation[];
}

/**
 * The provider profile a session is checked under: `--profile` when given, else the provider its next request
 * goes to (the model of its last user message, which OpenCode keeps per message; else of its last assistant
 * message) when unstuck knows it by that name (OpenCode's provider ids `openai`, `deepseek`, `groq`, `mistral`,
 * `moonshot`…), else OpenAI's. The model is that one too (some rules depend on it, and so does what is sent).
 */
export function sessionProfile(
  history: readonly OpenCodeMessage[],
  explicit: { profile?: ProfileName; model?: string },
): { profile: ProfileName; model?: string } {
  const reversed = [...history].reverse();
  const user = reversed.find((message) => message.info['role'] === 'user')?.info['model'];
  const assistant = reversed.find((message) => message.info['role'] === 'assistant')?.info;
  const chosen = isRecord(user) ? user : assistant;
  const provider = typeof chosen?.['providerID'] === 'string' ? chosen['providerID'] : '';
  const profile = explicit.profile ?? (isProfileName(provider) ? provider : 'openai');
  const model = explicit.model ?? (typeof chosen?.['modelID'] === 'string' ? chosen['modelID'] : undefined);
  return model === undefined ? { profile } : { profile, model };
}

export function assessOpenCode(
  history: readonly OpenCodeMessage[],
  options: Omit<RepairOptions, 'format' | 'profile'> & { profile?: ProfileName },
): OpenCodeAssessment {
  const { profile, model } = sessionProfile(history, options);
  const sent = model === undefined ? {} : { model };
  const { messages, sources } = toOpenCodeChat(history, sent);
  const coreOptions: RepairOptions = { ...options, profile, ...(model === undefined ? {} : { model }) };
  const violations = check(messages, coreOptions);
  const parts = new Map<string, Record<string, unknown>>();
  for (const message of history) for (const part of message.parts) parts.set(String(part['id']), part);
  const base = { messages, sources, profile, ...(model === undefined ? {} : { model }) };
  if (violations.length === 0)
    return {
      ...base,
      violations,
      changes: [],
      remaining: [],
      repaired: messages,
      plan: { edits: [], unwritable: [] },
      after: [],
    };
  const result = repair(messages, coreOptions);
  const plan = planWriteback(messages, sources, parts, result.messages);
  const edited = applyPlan(history, plan);
  const after = check(toOpenCodeChat(edited, sent).messages, coreOptions);
  return {
    ...base,
    violations,
    changes: result.changes,
    remaining: result.remaining,
    repaired: result.messages,
    plan,
    after,
  };
}

/** The session as its rows will be once the plan's edits are written. */
export function applyPlan(history: readonly OpenCodeMessage[], plan: WritebackPlan): OpenCodeMessage[] {
  if (plan.edits.length === 0) return [...history];
  const byPart = new Map(plan.edits.map((edit) => [edit.part, edit]));
  return history.map((message) => ({
    info: message.info,
    parts: message.parts.flatMap((part) => {
      const edit = byPart.get(String(part['id']));
      if (edit === undefined) return [part];
      return edit.kind === 'delete' ? [] : [applyEdit(part, edit)];
    }),
  }));
}
