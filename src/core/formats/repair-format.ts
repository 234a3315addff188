import { guardInput } from '../input-guard.js';
import { repairAnthropicMessages } from './anthropic-repair.js';
import type { FormatName, FormatRepairOptions, FormatRepairResult } from './format-types.js';
import { repairGeminiContents } from './gemini-repair.js';
import { repairResponsesInput } from './responses-repair.js';

/**
 * Repairs a native history with the same guarantees as `repair`: a valid input comes back as the
 * same array with no changes; the output passes `checkFormat` except what `remaining` names with
 * why; repairing again changes nothing; every change names the NATIVE input index it concerns;
 * untouched elements are the same objects; the input is never mutated.
 */
export function repairFormat(
  format: FormatName,
  input: readonly unknown[],
  options: FormatRepairOptions = {},
): FormatRepairResult {
  return guardInput('repairFormat', input, () => {
    switch (format) {
      case 'anthropic-messages':
        return repairAnthropicMessages(input, options);
      case 'gemini-contents':
        return repairGeminiContents(input, options);
      case 'responses-input':
        return repairResponsesInput(input, options);
    }
  });
}
