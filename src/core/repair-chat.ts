import type { Change } from './changes.js';
import { checkChat, hasViolation } from './check-chat.js';
import { createIdAllocator } from './ids.js';
import { isMessage, type Message } from './messages.js';
import type { RepairOptions, RepairResult } from './options.js';
import { getProfile } from './profiles.js';
import type { RepairContext } from './repair/context.js';
import { mergeSplitCalls } from './repair/merge-split-calls.js';
import { normalizeMessages } from './repair/normalize.js';
import { pairToolBlocks } from './repair/pair-tool-blocks.js';
import { applyProviderFixes } from './repair/provider-fixes.js';
import type { RuleId } from './rule-ids.js';
import { alternationRequired } from './rules/roles-not-alternating.js';

/** Why a rule is left to the caller: these need a decision repair cannot make without inventing content. */
const WHY: Partial<Record<RuleId, string>> = {
  'ends-with-assistant':
    'the request ends with an assistant message; send the next user message (or mark the assistant message prefix: true where the provider supports prefix completion)',
  'no-user-message': 'the request has no user message; repair will not invent what the user said',
  'empty-messages': 'there are no messages to send',
  'prefix-not-last':
    'a prefix assistant message must be the last message; only the caller knows whether it is still a prefix',
  'role-unknown': 'the role has no equivalent this provider accepts',
  'tool-calls-too-many': 'splitting a turn of more than 128 parallel calls would change what the model did',
  'tool-call-malformed': 'the call has no function name to rebuild it from',
  'roles-not-alternating': 'the same role twice in a row where merging would change what was said',
};

/** OpenAI chat's repair (the guarantees are `repair`'s); the native formats' core pass runs it on their converted form. */
export function repairChat(input: readonly Message[], options: RepairOptions): RepairResult {
  if (!hasViolation(input, options, 'repair'))
    return { messages: input as Message[], changes: [], remaining: [], changed: false };

  const profile = getProfile(options.profile);
  const strongest = options.level === 'strongest';
  const enforced = new Set<string>(profile.rules.map((rule) => rule.id));
  let allocate: ((seed: string) => string) | undefined;
  const changes: Change[] = [];
  const context: RepairContext = {
    profile,
    unanswered: options.unanswered ?? 'synthesize',
    orphans: options.orphans ?? 'to-user',
    strongest,
    foldRepeats: options.foldRepeatedUserMessages !== false,
    thinking: options.thinking ?? profile.thinkingByDefault(options.model),
    scope: options.scope ?? 'history',
    enforces: (rule) =>
      rule === 'roles-not-alternating' ? alternationRequired({ profile, model: options.model }) : enforced.has(rule),
    changes,
    note: (change) => changes.push(change),
    // Most repairs need no new id: collect the ids in use only when the first one is asked for.
    newId: (seed) => {
      allocate ??= createIdAllocator(idsIn(input), profile.idPattern);
      return allocate(seed);
    },
  };
  const copied = new Set<Message>();
  let entries = normalizeMessages(input, context, copied);
  entries = mergeSplitCalls(entries, context, copied);
  entries = pairToolBlocks(entries, context, copied);
  entries = applyProviderFixes(entries, context, copied);
  const messages = entries.map((entry) => entry.message);
  const remaining = checkChat(messages, options).map((violation) => ({
    ...violation,
    why: WHY[violation.rule] ?? 'no repair strategy covers this case',
  }));
  return { messages, changes, remaining, changed: changes.length > 0 };
}

function idsIn(input: readonly Message[]): Set<string> {
  const taken = new Set<string>();
  for (const message of input) {
    if (!isMessage(message)) continue;
    for (const call of message.tool_calls ?? []) if (typeof call?.id === 'string') taken.add(call.id);
    if (typeof message.tool_call_id === 'string') taken.add(message.tool_call_id);
  }
  return taken;
}
