import { checkChat } from './check-chat.js';
import { checkNative, formatOf } from './formats/native-formats.js';
import { guardInput } from './input-guard.js';
import type { Message } from './messages.js';
import type { CheckOptions } from './options.js';
import type { Violation } from './violation.js';

/**
 * Names every violation of a history in its wire format (`options.format`, default OpenAI chat),
 * in order, each at its index in the array checked and worded as that format's provider words it
 * in its 400. OpenAI chat is checked by the profile's rules; the other formats by their own.
 */
export function check(items: readonly unknown[], options: CheckOptions = {}): Violation[] {
  const format = options.format;
  if (format === undefined || format === 'openai-chat')
    return guardInput('check', items, () => checkChat(items as readonly Message[], options));
  const native = formatOf(format);
  return guardInput('check', items, () => checkNative(native, items, options));
}
