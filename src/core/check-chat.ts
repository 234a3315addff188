import { guardInput } from './input-guard.js';
import type { Message } from './messages.js';
import type { CheckOptions } from './options.js';
import type { Profile } from './profile.js';
import { getProfile } from './profiles.js';
import type { RuleId } from './rule-ids.js';
import type { Finding, Rule, RuleContext } from './rules/rule.js';
import { userMessageRepeated } from './rules/user-message-repeated.js';
import { scanToolBlocks } from './tool-block-scan.js';
import type { Violation } from './violation.js';

/** OpenAI chat's check: every violation of the profile's rules, in message order, worded as the provider words it. */
export function checkChat(messages: readonly Message[], options: CheckOptions): Violation[] {
  return run(messages, options, false);
}

/** True when check would find anything; stops at the first finding (repair's test of whether to start). */
export function hasViolation(messages: readonly Message[], options: CheckOptions = {}, caller = 'check'): boolean {
  try {
    guardInput(caller, messages, () => run(messages, options, true), FOUND);
    return false;
  } catch (error) {
    if (error === FOUND) return true;
    throw error;
  }
}

const FOUND = Symbol('found');

/** Which rules a run enforces, and the same grouped for dispatch: built once per profile and level. */
interface Dispatch {
  readonly ruleById: ReadonlyMap<RuleId, Rule>;
  /** Visitors by role, so a message meets only the rules that look at its role. */
  readonly byRole: ReadonlyMap<string, readonly Rule[]>;
  readonly everyRole: readonly Rule[];
  readonly finishers: readonly Rule[];
}

/**
 * Per rule list (a profile's `rules`, readonly): [without, with] the repeated-user-message rule.
 * Keyed by the array, so a profile given a new rule list gets a new dispatch.
 */
const dispatchCache = new WeakMap<readonly Rule[], [Dispatch | undefined, Dispatch | undefined]>();

function dispatchFor(profile: Profile, foldRepeated: boolean): Dispatch {
  let cached = dispatchCache.get(profile.rules);
  if (cached === undefined) {
    cached = [undefined, undefined];
    dispatchCache.set(profile.rules, cached);
  }
  const slot = foldRepeated ? 1 : 0;
  let dispatch = cached[slot];
  if (dispatch === undefined) {
    dispatch = buildDispatch(profile, foldRepeated);
    cached[slot] = dispatch;
  }
  return dispatch;
}

function buildDispatch(profile: Profile, foldRepeated: boolean): Dispatch {
  const ruleById = new Map<RuleId, Rule>();
  for (const rule of profile.rules) ruleById.set(rule.id, rule);
  if (foldRepeated) ruleById.set(userMessageRepeated.id, userMessageRepeated);
  const everyRole: Rule[] = [];
  const byRole = new Map<string, Rule[]>();
  const finishers: Rule[] = [];
  for (const rule of ruleById.values()) {
    if (rule.finish !== undefined) finishers.push(rule);
    if (rule.visit === undefined) continue;
    if (rule.roles === undefined) {
      everyRole.push(rule);
      for (const list of byRole.values()) list.push(rule);
      continue;
    }
    for (const role of rule.roles) {
      let list = byRole.get(role);
      if (list === undefined) {
        list = [...everyRole];
        byRole.set(role, list);
      }
      list.push(rule);
    }
  }
  return { ruleById, byRole, everyRole, finishers };
}

function run(messages: readonly Message[], options: CheckOptions, stopAtFirst: boolean): Violation[] {
  const profile = getProfile(options.profile);
  // The scan's findings, then the per-message rules' and the finishers': ordered by index at the end,
  // the scan's first where both name one message (the order the two passes this replaced gave).
  const scanned: Violation[] = [];
  const found: Violation[] = [];
  let into = scanned;
  const strongest = options.level === 'strongest';
  const { ruleById, byRole, everyRole, finishers } = dispatchFor(
    profile,
    strongest && options.foldRepeatedUserMessages !== false,
  );

  const context: { -readonly [Key in keyof RuleContext]: RuleContext[Key] } = {
    messages,
    profile,
    dialect: profile.dialect,
    scope: options.scope ?? 'history',
    thinking: options.thinking ?? profile.thinkingByDefault(options.model),
    model: options.model,
    lastUserIndex: -1, // known once every message was visited: only finishers read it
    report(finding: Finding) {
      const rule = ruleById.get(finding.rule);
      if (rule === undefined) return; // the profile does not enforce this rule
      if (stopAtFirst) throw FOUND;
      const word = rule.wording[profile.dialect] ?? rule.wording.openai;
      into.push({
        rule: finding.rule,
        index: finding.index,
        ...(finding.toolCallId === undefined ? {} : { toolCallId: finding.toolCallId }),
        message: word(finding),
      });
    },
  };

  let lastUser = -1;
  let visited = false;
  let lastRole = '';
  let rules: readonly Rule[] = everyRole;
  const visit = (message: Message, index: number) => {
    const role = message.role;
    if (role === 'user') lastUser = index;
    if (role !== lastRole) {
      lastRole = role;
      rules = byRole.get(role) ?? everyRole;
    }
    if (rules.length === 0) return;
    visited = true;
    into = found;
    for (let position = 0; position < rules.length; position += 1)
      (rules[position] as Rule).visit?.(message, index, context);
    into = scanned;
  };
  scanToolBlocks(context, profile.uniqueIdsAcrossRequest || strongest, undefined, visit);
  context.lastUserIndex = lastUser;
  into = found;
  for (const rule of finishers) rule.finish?.(context);
  const violations = found.length === 0 ? scanned : scanned.length === 0 ? found : scanned.concat(found);
  // Unsorted only where no rule but the scan's can find anything (a pairing-only profile): the scan's own order.
  if (violations.length > 1 && (visited || finishers.length > 0)) violations.sort((a, b) => a.index - b.index);
  return violations;
}
