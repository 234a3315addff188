import { buildScreen, isQuiet, SCREENED_RULES } from './clean-screen.js';
import { guardInput } from './input-guard.js';
import type { Message } from './messages.js';
import type { CheckOptions } from './options.js';
import type { Profile } from './profile.js';
import { getProfile } from './profiles.js';
import type { RuleId } from './rule-ids.js';
import * as builtIn from './rules/index.js';
import { alternationRequired } from './rules/roles-not-alternating.js';
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

/**
 * check with every rule visiting every message of its role, the clean screen off: the reference the screen is
 * tested against (test/core/clean-screen.property.test.ts). Not part of the package's surface.
 */
export function checkChatEveryRule(messages: readonly Message[], options: CheckOptions = {}): Violation[] {
  return guardInput('check', messages, () => run(messages, options, false, true));
}

/** Which rules a run enforces, and the same grouped for dispatch: built once per profile and level. */
interface Dispatch {
  readonly ruleById: ReadonlyMap<RuleId, Rule>;
  /** Visitors by role, so a message meets only the rules that look at its role. */
  readonly byRole: ReadonlyMap<string, readonly Rule[]>;
  readonly everyRole: readonly Rule[];
  /** Per role, the visitors the clean screen does not answer for: these meet every message of their role. */
  readonly unscreenedByRole: ReadonlyMap<string, readonly Rule[]>;
  readonly unscreenedEveryRole: readonly Rule[];
  /** The built-in per-message rules of this dispatch the screen answers for. */
  readonly screened: ReadonlySet<RuleId>;
  readonly finishers: readonly Rule[];
  /** The built-in reasoning-content rule is a finisher here: skipped when the pass saw no turn it could report in. */
  readonly reasoningScreened: boolean;
}

/** The built-in rule objects by id: only these (not a custom rule reusing an id) are left to the screen. */
const BUILT_IN = new Map<RuleId, Rule>(
  Object.values(builtIn)
    .filter((value): value is Rule => typeof value === 'object' && value !== null && 'id' in value)
    .map((rule) => [rule.id, rule]),
);
const isScreened = (rule: Rule) => SCREENED_RULES.has(rule.id) && BUILT_IN.get(rule.id) === rule;

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
  const unscreenedByRole = new Map<string, Rule[]>();
  for (const [role, list] of byRole)
    unscreenedByRole.set(
      role,
      list.filter((rule) => !isScreened(rule)),
    );
  const screened = new Set<RuleId>();
  for (const rule of ruleById.values()) if (rule.visit !== undefined && isScreened(rule)) screened.add(rule.id);
  return {
    ruleById,
    byRole,
    everyRole,
    unscreenedByRole,
    unscreenedEveryRole: everyRole.filter((rule) => !isScreened(rule)),
    screened,
    finishers,
    reasoningScreened: finishers.includes(builtIn.reasoningContentMissing),
  };
}

function run(
  messages: readonly Message[],
  options: CheckOptions,
  stopAtFirst: boolean,
  screenOff = false,
): Violation[] {
  const profile = getProfile(options.profile);
  // The scan's findings, then the per-message rules' and the finishers': ordered by index at the end,
  // the scan's first where both name one message (the order the two passes this replaced gave).
  const scanned: Violation[] = [];
  const found: Violation[] = [];
  let into = scanned;
  const strongest = options.level === 'strongest';
  const { ruleById, byRole, everyRole, unscreenedByRole, unscreenedEveryRole, screened, finishers, reasoningScreened } =
    dispatchFor(profile, strongest && options.foldRepeatedUserMessages !== false);
  const screen = screenOff ? undefined : buildScreen(screened, profile);

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
  let unscreened: readonly Rule[] = unscreenedEveryRole;
  const alternate = alternationRequired(context);
  const last = messages.length - 1;
  let previousIndex = -2;
  let previousRole: string | undefined;
  // The reasoning rule reports only in a turn that called tools (or, in a request, the turn after the last user
  // message) and only at an assistant message without a string reasoning_content: noted here, so a history
  // with no such turn skips the rule's own pass.
  const trackReasoning = reasoningScreened && context.thinking && !screenOff;
  let turnCalls = false;
  let turnUnreasoned = false;
  let reasoningSuspect = false;
  const visit = (message: Message, index: number, role: string, content: unknown, calls: unknown) => {
    if (role === 'user') {
      lastUser = index;
      if (turnCalls && turnUnreasoned) reasoningSuspect = true;
      turnCalls = false;
      turnUnreasoned = false;
    } else if (trackReasoning && role === 'assistant') {
      if (typeof message.reasoning_content !== 'string') turnUnreasoned = true;
      if (Array.isArray(calls) && calls.length > 0) turnCalls = true;
    }
    if (role !== lastRole) {
      lastRole = role;
      rules = byRole.get(role) ?? everyRole;
      unscreened = unscreenedByRole.get(role) ?? unscreenedEveryRole;
    }
    const previous = previousIndex === index - 1 ? previousRole : undefined;
    previousIndex = index;
    previousRole = role;
    if (rules.length === 0) return;
    visited = true;
    const list =
      screen !== undefined && isQuiet(screen, message, index, role, content, calls, previous, alternate, last)
        ? unscreened
        : rules;
    if (list.length === 0) return;
    into = found;
    for (let position = 0; position < list.length; position += 1)
      (list[position] as Rule).visit?.(message, index, context);
    into = scanned;
  };
  scanToolBlocks(context, profile.uniqueIdsAcrossRequest || strongest, undefined, visit);
  if (turnUnreasoned && (turnCalls || context.scope === 'request')) reasoningSuspect = true;
  context.lastUserIndex = lastUser;
  into = found;
  for (const rule of finishers) {
    if (trackReasoning && !reasoningSuspect && rule === builtIn.reasoningContentMissing) continue;
    rule.finish?.(context);
  }
  const violations = found.length === 0 ? scanned : scanned.length === 0 ? found : scanned.concat(found);
  // Unsorted only where no rule but the scan's can find anything (a pairing-only profile): the scan's own order.
  if (violations.length > 1 && (visited || finishers.length > 0)) violations.sort((a, b) => a.index - b.index);
  return violations;
}
