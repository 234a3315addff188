import type { Message } from './messages.js';
import type { ProfileTraits } from './profile-traits.js';
import type { RuleId } from './rule-ids.js';

/**
 * The clean path of `check`: for each message, a test that reads only what the tool-block scan already
 * holds (role, content, tool_calls) and proves that none of the per-message rules it covers can report
 * anything there, so their visitors are not called. A message it cannot clear meets every rule of its
 * role, as before: the screen decides only WHETHER the rules run, never what they find, and a rule it does
 * not know (a custom profile's, or one whose test needs more than these reads: JSON arguments, id formats,
 * a field allowlist) is visited on every message of its role. test/core/clean-screen.property.test.ts checks
 * that a check with the screen finds exactly what one visiting every rule finds (docs/decisions/core-clean-path.md).
 */
export interface Screen {
  readonly roles: ReadonlySet<string>;
  /** roles.has for the four roles nearly every message has, answered once per run instead of once per message. */
  readonly userKnown: boolean;
  readonly assistantKnown: boolean;
  readonly toolKnown: boolean;
  readonly systemKnown: boolean;
  /** Which rules of the run the screen answers for (each true only where the profile enforces the built-in rule). */
  readonly roleUnknown: boolean;
  readonly contentNull: boolean;
  readonly contentEmpty: boolean;
  readonly toolCallsEmpty: boolean;
  readonly toolCallsTooMany: boolean;
  readonly toolCallMalformed: boolean;
  readonly prefixNotLast: boolean;
  readonly systemMessagePosition: boolean;
  readonly rolesNotAlternating: boolean;
  readonly toolFollowedByUser: boolean;
  readonly userMessageRepeated: boolean;
  /** A rule reads the message before this one (so the screen needs its role). */
  readonly readsPrevious: boolean;
  readonly contentAlwaysRequired: boolean;
  readonly assistantContentString: boolean;
}

/** The per-message rules the screen can clear a message of. */
export const SCREENED_RULES: ReadonlySet<RuleId> = new Set<RuleId>([
  'role-unknown',
  'content-null',
  'content-empty',
  'tool-calls-empty',
  'tool-calls-too-many',
  'tool-call-malformed',
  'prefix-not-last',
  'system-message-position',
  'roles-not-alternating',
  'tool-followed-by-user',
  'user-message-repeated',
]);

/** Built once per run: the profile's traits are read where they are, since a profile object may share another's rule list. */
export function buildScreen(enforced: ReadonlySet<RuleId>, profile: ProfileTraits): Screen {
  const rolesNotAlternating = enforced.has('roles-not-alternating');
  const toolFollowedByUser = enforced.has('tool-followed-by-user');
  const userMessageRepeated = enforced.has('user-message-repeated');
  return {
    roles: profile.roles,
    userKnown: profile.roles.has('user'),
    assistantKnown: profile.roles.has('assistant'),
    toolKnown: profile.roles.has('tool'),
    systemKnown: profile.roles.has('system'),
    roleUnknown: enforced.has('role-unknown'),
    contentNull: enforced.has('content-null'),
    contentEmpty: enforced.has('content-empty'),
    toolCallsEmpty: enforced.has('tool-calls-empty'),
    toolCallsTooMany: enforced.has('tool-calls-too-many'),
    toolCallMalformed: enforced.has('tool-call-malformed'),
    prefixNotLast: enforced.has('prefix-not-last'),
    systemMessagePosition: enforced.has('system-message-position'),
    rolesNotAlternating,
    toolFollowedByUser,
    userMessageRepeated,
    readsPrevious: rolesNotAlternating || toolFollowedByUser || userMessageRepeated,
    contentAlwaysRequired: profile.contentAlwaysRequired === true,
    assistantContentString: profile.assistantContentString === true,
  };
}

/**
 * True when no screened rule can report at `message` (an entry `isMessage` accepted), given the fields the scan
 * read from it (`role`, `content`, and `calls`: its tool_calls, read for an assistant message only). `previousRole` is
 * the role of the message at index - 1, or undefined when that entry is not a message (or there is none);
 * `alternate` whether this run enforces alternation (the rule's own test of profile and model); `last` the
 * index of the last entry. Each condition is its rule's visit read backwards: where it is not obvious
 * that the rule stays silent, the answer is false and the rule runs.
 */
export function isQuiet(
  screen: Screen,
  message: Message,
  index: number,
  role: string,
  content: unknown,
  calls: unknown,
  previousRole: string | undefined,
  alternate: boolean,
  last: number,
): boolean {
  if (
    screen.roleUnknown &&
    !(role === 'assistant'
      ? screen.assistantKnown
      : role === 'tool'
        ? screen.toolKnown
        : role === 'user'
          ? screen.userKnown
          : role === 'system'
            ? screen.systemKnown
            : screen.roles.has(role))
  )
    return false;
  if (role === 'assistant') {
    let callCount = -1; // -1: no tool_calls array
    if (calls !== undefined) {
      if (!Array.isArray(calls)) return false; // tool_calls that is no array: let the rules say what they say
      callCount = calls.length;
      if (callCount === 0 && screen.toolCallsEmpty) return false;
      if (callCount > 128 && screen.toolCallsTooMany) return false;
      if (screen.toolCallMalformed)
        for (let position = 0; position < callCount; position += 1) {
          const call: unknown = calls[position];
          if (call === null || typeof call !== 'object' || Array.isArray(call)) return false;
          const fn: unknown = (call as { function?: unknown }).function;
          if (fn === null || typeof fn !== 'object' || Array.isArray(fn)) return false;
          if (typeof (fn as { name?: unknown }).name !== 'string') return false;
        }
    }
    if (typeof content === 'string') {
      if (content === '' && callCount <= 0 && screen.contentEmpty && message.prefix !== true) return false;
    } else if (content === null || content === undefined) {
      if (screen.contentNull && (callCount <= 0 || screen.contentAlwaysRequired)) return false;
    } else return false;
    if (screen.prefixNotLast && message.prefix === true && index !== last) return false;
    if (screen.rolesNotAlternating && alternate && index > 0 && (previousRole === undefined || previousRole === role))
      return false;
    return true;
  }
  if (typeof content !== 'string') {
    if (content === null || content === undefined) {
      if (screen.contentNull) return false;
    } else return false;
  }
  if (index === 0 || !screen.readsPrevious) return !(role === 'system' && index > 0 && screen.systemMessagePosition);
  if (role === 'system' && screen.systemMessagePosition) return false;
  if (role === 'user' || role === 'system') {
    if (previousRole === undefined) return false;
    if (screen.toolFollowedByUser && previousRole === 'tool') return false;
    if (
      role === 'user' &&
      previousRole === 'user' &&
      (screen.userMessageRepeated || (screen.rolesNotAlternating && alternate))
    )
      return false;
  }
  return true;
}
