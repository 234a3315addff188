import type {
  Change,
  CheckOptions,
  RepairPolicy as CoreRepairPolicy,
  Message,
  Profile,
  ProfileName,
  Remaining,
  RuleId,
} from '../core/index.js';
import { check, repair } from '../core/index.js';
import { repairedRules } from './wires/http-wire.js';

/** How a request is repaired: the core's repair policy, and its level (a heal repairs at 'strongest'). */
export type RepairPolicy = CoreRepairPolicy & Pick<CheckOptions, 'level'>;

/** A chat-completions request body: an object with a `messages` array; every other field is kept as it came. */
export interface ChatBody {
  messages: Message[];
  model?: unknown;
  [field: string]: unknown;
}

export interface SanitizedChatBody {
  body: ChatBody;
  changed: boolean;
  changes: Change[];
  /** The rules whose violations the repair removed. */
  rules: RuleId[];
  remaining: Remaining[];
}

/** The body parsed when it is a chat-completions request (JSON object with a `messages` array), else undefined. */
export function parseChatBody(text: string): ChatBody | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  if (!Array.isArray((value as { messages?: unknown }).messages)) return undefined;
  return value as ChatBody;
}

/**
 * Repairs a chat body for the provider as a request (`scope: 'request'`). A valid body comes back
 * as the same object with `changed: false`, so the caller can send the original bytes.
 */
export function sanitizeChatBody(
  body: ChatBody,
  options: { profile?: ProfileName | Profile | undefined; policy?: RepairPolicy | undefined },
): SanitizedChatBody {
  const shared = {
    scope: 'request' as const,
    ...(options.profile === undefined ? {} : { profile: options.profile }),
    ...(typeof body.model === 'string' ? { model: body.model } : {}),
    ...thinkingOf(body),
  };
  const result = repair(body.messages, { ...shared, ...options.policy });
  if (!result.changed) return { body, changed: false, changes: [], rules: [], remaining: result.remaining };
  return {
    body: { ...body, messages: result.messages },
    changed: true,
    changes: result.changes,
    rules: repairedRules(check(body.messages, shared), result.remaining),
    remaining: result.remaining,
  };
}

/** DeepSeek and Moonshot say thinking on or off in the request; otherwise the core decides from the model. */
function thinkingOf(body: ChatBody): { thinking?: boolean } {
  const thinking = body.thinking;
  if (thinking === null || typeof thinking !== 'object') return {};
  const type = (thinking as { type?: unknown }).type;
  if (type === 'enabled') return { thinking: true };
  if (type === 'disabled') return { thinking: false };
  return {};
}
