import { guardInput } from '../input-guard.js';
import { checkAnthropicMessages } from './anthropic-check.js';
import type { FormatCheckOptions, FormatName, FormatViolation } from './format-types.js';
import { checkGeminiContents } from './gemini-check.js';
import { checkResponsesInput } from './responses-check.js';

/**
 * Names every violation of a native history (Anthropic `messages`, Gemini `contents`, Responses
 * `input`) of the format's own rules, each at its index in the native array and worded as that
 * provider words it.
 */
export function checkFormat(
  format: FormatName,
  input: readonly unknown[],
  options: FormatCheckOptions = {},
): FormatViolation[] {
  return guardInput('checkFormat', input, () => {
    switch (format) {
      case 'anthropic-messages':
        return checkAnthropicMessages(input, options);
      case 'gemini-contents':
        return checkGeminiContents(input);
      case 'responses-input':
        return checkResponsesInput(input);
    }
  });
}
