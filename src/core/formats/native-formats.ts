import { UnstuckError } from '../errors.js';
import type { RepairOptions, RepairResult } from '../options.js';
import type { Violation } from '../violation.js';
import { checkAnthropicMessages } from './anthropic-check.js';
import { repairAnthropicMessages } from './anthropic-repair.js';
import { formatNames, type NativeFormatName } from './format-types.js';
import { checkGeminiContents } from './gemini-check.js';
import { repairGeminiContents } from './gemini-repair.js';
import { checkResponsesInput } from './responses-check.js';
import { repairResponsesInput } from './responses-repair.js';

/** The format named, when it is one of the native formats; any other name is one clear error. */
export function formatOf(format: unknown): NativeFormatName {
  if (format === 'anthropic-messages' || format === 'gemini-contents' || format === 'responses-input') return format;
  throw new UnstuckError('USAGE', `unknown wire format '${String(format)}' (known: ${formatNames.join(', ')})`);
}

/** A native history (Anthropic `messages`, Gemini `contents`, Responses `input`) checked by its format's own rules. */
export function checkNative(format: NativeFormatName, input: readonly unknown[], options: RepairOptions): Violation[] {
  switch (format) {
    case 'anthropic-messages':
      return checkAnthropicMessages(input, options);
    case 'gemini-contents':
      return checkGeminiContents(input, options);
    case 'responses-input':
      return checkResponsesInput(input, options);
  }
}

/** A native history repaired on its own form; every change names the NATIVE input index it concerns. */
export function repairNative(
  format: NativeFormatName,
  input: readonly unknown[],
  options: RepairOptions,
): RepairResult<unknown> {
  switch (format) {
    case 'anthropic-messages':
      return repairAnthropicMessages(input, options);
    case 'gemini-contents':
      return repairGeminiContents(input, options);
    case 'responses-input':
      return repairResponsesInput(input, options);
  }
}
