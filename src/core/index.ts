export type { Change, ChangeKind } from './changes.js';
export type { CheckOptions, Violation } from './check.js';
export { check } from './check.js';
export type { ErrorClassification } from './classify-error.js';
export { classifyError } from './classify-error.js';
export type { UnstuckErrorCode } from './errors.js';
export { isUnstuckError, UnstuckError } from './errors.js';
export type { AnthropicBlock, AnthropicMessage } from './formats/anthropic-messages.js';
export { fromAnthropicMessages, toAnthropicMessages } from './formats/anthropic-messages.js';
export { checkFormat } from './formats/check-format.js';
export type {
  FormatChange,
  FormatChangeKind,
  FormatCheckOptions,
  FormatName,
  FormatRemaining,
  FormatRepairOptions,
  FormatRepairResult,
  FormatViolation,
} from './formats/format-types.js';
export { formatNames, isFormatName } from './formats/format-types.js';
export type { GeminiContent, GeminiPart } from './formats/gemini-contents.js';
export { fromGeminiContents, toGeminiContents } from './formats/gemini-contents.js';
export { repairFormat } from './formats/repair-format.js';
export type { ResponsesItem } from './formats/responses-input.js';
export { fromResponsesInput, toResponsesInput } from './formats/responses-input.js';
export { fnv1a } from './ids.js';
export type { Content, ContentPart, Message, Role, TextPart, ToolCall, ToolCallFunction } from './messages.js';
export { hasToolCalls, isEmptyContent, isMessage, textOf } from './messages.js';
export type { Profile, ProfileName, ProviderViolation } from './profiles.js';
export { getProfile, isProfileName, profileNames, profiles } from './profiles.js';
export { SYNTHETIC_RESULT } from './repair/pair-tool-blocks.js';
export type { Remaining, RepairOptions, RepairResult } from './repair.js';
export { repair } from './repair.js';
export type { RuleId } from './rule-ids.js';
export { isPairingRule, PAIRING_RULES } from './rule-ids.js';
