/*
 * TEMPORARY: the core's modules imported one by one until src/core/index.ts lands (with
 * classifyError); then this file becomes a re-export of '../core/index.js'.
 */
export { check } from '../core/check.js';
export { repair } from '../core/repair.js';
export type { Remaining } from '../core/repair.js';
export type { Change } from '../core/changes.js';
export type { Message } from '../core/messages.js';
export { getProfile, isProfileName } from '../core/profiles.js';
export type { Profile, ProfileName } from '../core/profiles.js';
export { isPairingRule } from '../core/rule-ids.js';
export type { RuleId } from '../core/rule-ids.js';
import type { RuleId } from '../core/rule-ids.js';

const INTERIM: [RegExp, RuleId][] = [
  [/must be followed by tool messages|insufficient tool messages following/i, 'tool-calls-unanswered'],
  [/role 'tool' must be a response to a prec?eed?ing message/i, 'tool-result-orphan'],
  [/reasoning_content/i, 'reasoning-content-missing'],
  [/Unexpected role 'user' after role 'tool'/i, 'tool-followed-by-user'],
  [/duplicate/i, 'tool-call-id-duplicate'],
];

/** Interim stand-in for the core's classifyError (same signature). */
export function classifyError(status: number, body: unknown): { rule: RuleId; provider: string; text: string } | undefined {
  if (status !== 400) return undefined;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  for (const [pattern, rule] of INTERIM) if (pattern.test(text)) return { rule, provider: 'openai', text };
  return undefined;
}
