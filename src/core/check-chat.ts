import { buildScreen, isQuiet, SCREENED_RULES, type Screen } from './clean-screen.js';
import { guardInput } from './input-guard.js';
import type { Message, ToolCall } from './messages.js';
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
  /** byRole and unscreenedByRole of the four common roles. */
  readonly assistant: readonly [readonly Rule[], readonly Rule[]];
  readonly tool: readonly [readonly Rule[], readonly Rule[]];
  readonly user: readonly [readonly Rule[], readonly Rule[]];
  readonly system: readonly [readonly Rule[], readonly Rule[]];
  /** Every visitor of the dispatch is one the screen answers for (the clean path needs no rule call at all). */
  readonly allScreened: boolean;
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
  const unscreenedEveryRole = everyRole.filter((rule) => !isScreened(rule));
  const common = (role: string) =>
    [byRole.get(role) ?? everyRole, unscreenedByRole.get(role) ?? unscreenedEveryRole] as const;
  return {
    assistant: common('assistant'),
    tool: common('tool'),
    user: common('user'),
    system: common('system'),
    ruleById,
    byRole,
    everyRole,
    unscreenedByRole,
    unscreenedEveryRole,
    screened,
    allScreened: [...ruleById.values()].every((rule) => rule.visit === undefined || isScreened(rule)),
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
  const strongest = options.level === 'strongest';
  const dispatch = dispatchFor(profile, strongest && options.foldRepeatedUserMessages !== false);
  const pass = new ChatCheck(messages, options, profile, dispatch, stopAtFirst, screenOff);
  const uniqueIds = profile.uniqueIdsAcrossRequest || strongest;
  try {
    // The clean path first: one visit per message and per call, nothing allocated (but the ids of a request whose
    // ids must be unique). Anything it cannot clear, and everything after, takes the full scan from the start.
    if (screenOff || !pass.clean(uniqueIds)) scanToolBlocks(pass, uniqueIds, undefined, pass);
    return pass.finish();
  } finally {
    pass.release();
    if (lastPass !== pass) lastPass = pass;
  }
}

/**
 * The last check's instance, emptied (it holds no history and no finding): it keeps the class's map alive. When
 * every instance had been collected (a GC between two checks), V8 dropped the map, and with it the feedback and the
 * optimized code of the scan that name it, so each check of fresh data deoptimized and recompiled the scan
 * (`--trace-deopt`: 25 deoptimizations in 60 checks of the bench history; 1 with this). An instance made for the
 * purpose at load time does not do it: it never reaches the map a check ends with.
 */
let lastPass: ChatCheck | undefined;

/**
 * One check: the rule context, and the visitor the tool-block scan calls for each message. A class, not closures
 * made per call: optimized code that inlines a closure holds it weakly and is thrown away when a GC collects it,
 * so a per-call closure called once per message cost a deoptimization and a recompile on every check of fresh data.
 */
const NOTHING: readonly Message[] = Object.freeze([]);

class ChatCheck implements RuleContext {
  messages: readonly Message[];
  readonly profile: Profile;
  readonly dialect: Profile['dialect'];
  readonly scope: 'history' | 'request';
  readonly thinking: boolean;
  readonly model: string | undefined;
  lastUserIndex = -1; // known once every message was visited: only finishers read it
  private readonly dispatch: Dispatch;
  private readonly stopAtFirst: boolean;
  private readonly screen: Screen | undefined;
  private readonly alternate: boolean;
  private readonly last: number;
  // The scan's findings, then the per-message rules' and the finishers': ordered by index at the end,
  // the scan's first where both name one message (the order the two passes this replaced gave).
  private scanned: Violation[] = [];
  private found: Violation[] = [];
  private into: Violation[];
  private visited = false;
  private lastRole = '';
  private rules: readonly Rule[];
  private unscreened: readonly Rule[];
  private previousIndex = -2;
  private previousRole: string | undefined = undefined;
  // The reasoning rule reports only in a turn that called tools (or, in a request, the turn after the last user
  // message) and only at an assistant message without a string reasoning_content: noted here, so a history
  // with no such turn skips the rule's own pass.
  private readonly trackReasoning: boolean;
  private turnCalls = false;
  private turnUnreasoned = false;
  private reasoningSuspect = false;

  constructor(
    messages: readonly Message[],
    options: CheckOptions,
    profile: Profile,
    dispatch: Dispatch,
    stopAtFirst: boolean,
    screenOff: boolean,
  ) {
    this.messages = messages;
    this.profile = profile;
    this.dialect = profile.dialect;
    this.scope = options.scope ?? 'history';
    this.thinking = options.thinking ?? profile.thinkingByDefault(options.model);
    this.model = options.model;
    this.dispatch = dispatch;
    this.stopAtFirst = stopAtFirst;
    this.screen = screenOff ? undefined : buildScreen(dispatch.screened, profile);
    this.alternate = alternationRequired(this);
    this.last = messages.length - 1;
    this.into = this.scanned;
    this.rules = dispatch.everyRole;
    this.unscreened = dispatch.unscreenedEveryRole;
    this.trackReasoning = dispatch.reasoningScreened && this.thinking && !screenOff;
  }

  report(finding: Finding): void {
    const rule = this.dispatch.ruleById.get(finding.rule);
    if (rule === undefined) return; // the profile does not enforce this rule
    if (this.stopAtFirst) throw FOUND;
    const word = rule.wording[this.dialect] ?? rule.wording.openai;
    this.into.push({
      rule: finding.rule,
      index: finding.index,
      ...(finding.toolCallId === undefined ? {} : { toolCallId: finding.toolCallId }),
      message: word(finding),
    });
  }

  /** Called by the scan for every entry that is a message, in order, with the fields it read. */
  visit(message: Message, index: number, role: string, content: unknown, calls: unknown): void {
    if (role === 'user') {
      this.lastUserIndex = index;
      if (this.turnCalls && this.turnUnreasoned) this.reasoningSuspect = true;
      this.turnCalls = false;
      this.turnUnreasoned = false;
    } else if (this.trackReasoning && role === 'assistant') {
      if (typeof message.reasoning_content !== 'string') this.turnUnreasoned = true;
      if (Array.isArray(calls) && calls.length > 0) this.turnCalls = true;
    }
    if (role !== this.lastRole) {
      // Roles alternate nearly every message: the common four without a Map lookup.
      this.lastRole = role;
      const dispatch = this.dispatch;
      const common =
        role === 'assistant'
          ? dispatch.assistant
          : role === 'tool'
            ? dispatch.tool
            : role === 'user'
              ? dispatch.user
              : role === 'system'
                ? dispatch.system
                : undefined;
      if (common !== undefined) {
        this.rules = common[0];
        this.unscreened = common[1];
      } else {
        this.rules = dispatch.byRole.get(role) ?? dispatch.everyRole;
        this.unscreened = dispatch.unscreenedByRole.get(role) ?? dispatch.unscreenedEveryRole;
      }
    }
    const previous = this.previousIndex === index - 1 ? this.previousRole : undefined;
    this.previousIndex = index;
    this.previousRole = role;
    const rules = this.rules;
    if (rules.length === 0) return;
    this.visited = true;
    const screen = this.screen;
    const list =
      screen !== undefined && isQuiet(screen, message, index, role, content, calls, previous, this.alternate, this.last)
        ? this.unscreened
        : rules;
    if (list.length === 0) return;
    this.into = this.found;
    for (let position = 0; position < list.length; position += 1)
      (list[position] as Rule).visit?.(message, index, this);
    this.into = this.scanned;
  }

  /**
   * True when the history is clean for every pairing rule and every screened per-message rule (and the profile has
   * no rule the screen does not answer for): the blocks whole (each call with a distinct id answered once by the
   * run of tool messages right after it), every message quiet. It reads what the full scan reads, in the same one
   * pass, with no block state beyond the open block's calls and a bit per call; on the first thing it cannot
   * clear it returns false, having reported nothing, and the full scan runs. A block of more than 31 calls, content
   * that is not a string (or null), a custom rule: the full scan.
   */
  clean(uniqueIds: boolean): boolean {
    const screen = this.screen;
    if (screen === undefined || !this.dispatch.allScreened) return false;
    const messages = this.messages;
    const seen = uniqueIds ? new Set<string>() : undefined;
    const alternate = this.alternate;
    const last = this.last;
    const trackReasoning = this.trackReasoning;
    let lastUser = -1;
    let turnCalls = false;
    let turnUnreasoned = false;
    let suspect = false;
    let block: readonly ToolCall[] | undefined; // the open block's calls
    let owed = 0;
    let answered = 0; // a bit per call of the open block
    let previousRole: string | undefined;
    for (let index = 0; index < messages.length; index += 1) {
      const message: unknown = messages[index];
      if (message === null || typeof message !== 'object' || Array.isArray(message)) return false;
      const entry = message as Message;
      const role = entry.role;
      if (typeof role !== 'string') return false;
      const content = entry.content;
      if (typeof content !== 'string' && content !== null && content !== undefined) return false;
      let calls: unknown;
      if (role === 'tool') {
        if (owed === 0 || block === undefined) return false;
        const id = entry.tool_call_id;
        if (typeof id !== 'string' || id === '') return false;
        let position = 0;
        while (position < block.length && (block[position]?.id !== id || (answered & (1 << position)) !== 0))
          position += 1;
        if (position === block.length) return false;
        answered |= 1 << position;
        owed -= 1;
      } else {
        if (owed !== 0) return false;
        block = undefined;
        if (role === 'user') {
          lastUser = index;
          if (turnCalls && turnUnreasoned) suspect = true;
          turnCalls = false;
          turnUnreasoned = false;
        } else if (role === 'assistant') {
          calls = entry.tool_calls;
          if (Array.isArray(calls) && calls.length > 0) {
            const opened = calls as readonly ToolCall[];
            if (opened.length > 31) return false;
            for (let position = 0; position < opened.length; position += 1) {
              const id = opened[position]?.id;
              if (typeof id !== 'string' || id === '') return false;
              for (let before = 0; before < position; before += 1) if (opened[before]?.id === id) return false;
              if (seen !== undefined) {
                if (seen.has(id)) return false;
                seen.add(id);
              }
            }
            block = opened;
            owed = opened.length;
            answered = 0;
            turnCalls = true;
          }
          if (trackReasoning && typeof entry.reasoning_content !== 'string') turnUnreasoned = true;
        }
      }
      if (!isQuiet(screen, entry, index, role, content, calls, previousRole, alternate, last)) return false;
      previousRole = role;
    }
    if (owed !== 0) return false;
    this.lastUserIndex = lastUser;
    this.turnCalls = turnCalls;
    this.turnUnreasoned = turnUnreasoned;
    this.reasoningSuspect = suspect;
    this.visited = true;
    return true;
  }

  /** Lets go of the history and the findings (the instance outlives the check: see lastPass). */
  release(): void {
    this.messages = NOTHING;
    this.scanned = [];
    this.found = [];
    this.into = this.scanned;
    this.rules = this.dispatch.everyRole;
    this.unscreened = this.dispatch.unscreenedEveryRole;
  }

  finish(): Violation[] {
    if (this.turnUnreasoned && (this.turnCalls || this.scope === 'request')) this.reasoningSuspect = true;
    this.into = this.found;
    const finishers = this.dispatch.finishers;
    for (const rule of finishers) {
      if (this.trackReasoning && !this.reasoningSuspect && rule === builtIn.reasoningContentMissing) continue;
      rule.finish?.(this);
    }
    const { scanned, found } = this;
    const violations = found.length === 0 ? scanned : scanned.length === 0 ? found : scanned.concat(found);
    // Unsorted only where no rule but the scan's can find anything (a pairing-only profile): the scan's own order.
    if (violations.length > 1 && (this.visited || finishers.length > 0)) violations.sort((a, b) => a.index - b.index);
    return violations;
  }
}
