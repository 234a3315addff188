import type { Profile, ProfileName, RuleId } from '../core/index.js';
import { classifyError, isHealableRule, isProfileName } from '../core/index.js';
import type { ChatBody, RepairPolicy, SanitizedChatBody } from './sanitize-chat-body.js';
import { sanitizeChatBody } from './sanitize-chat-body.js';

/** A body to send once more after a provider 400, and the rule the 400 was classified as. */
export type HealedChatBody = SanitizedChatBody & { rejectedFor: RuleId };

/**
 * The heal decision (docs/decisions/http-heal-once.md), shared by the sanitizing fetch and both
 * proxy paths: a 400 the core classifies as a pairing or ordering rule gets the strongest repair of
 * the body that was sent; when that changes nothing and the 400 reads like another known provider,
 * that provider's rules are tried (the upstream may be stricter than the profile chosen).
 * Undefined means: no retry, the 400 goes back as it came.
 */
export function healChatBody(
  sent: ChatBody,
  status: number,
  text: string,
  options: { profile?: ProfileName | Profile | undefined; policy?: RepairPolicy | undefined },
): HealedChatBody | undefined {
  if (status !== 400) return undefined;
  const verdict = classifyError(status, text);
  if (verdict === undefined || !isHealableRule(verdict.rule)) return undefined;
  const policy = { ...options.policy, level: 'strongest' as const };
  let healed = sanitizeChatBody(sent, { profile: options.profile, policy });
  if (!healed.changed && isProfileName(verdict.provider) && verdict.provider !== options.profile)
    healed = sanitizeChatBody(sent, { profile: verdict.provider, policy });
  return healed.changed ? { ...healed, rejectedFor: verdict.rule } : undefined;
}
