import { formatOf, repairNative } from './formats/native-formats.js';
import { guardInput } from './input-guard.js';
import type { Message } from './messages.js';
import type { RepairOptions, RepairResult } from './options.js';
import { repairChat } from './repair-chat.js';

/**
 * Turns any history into one its provider accepts, in its own wire format (`options.format`,
 * default OpenAI chat), reporting every change. Guarantees (each a property test, in every
 * format): the output passes `check` for every rule repair fixes, and the rest is in `remaining`
 * with why; repairing the output changes nothing; every text and tool result of the input is in
 * the output or named by a change; a valid input comes back as the same array with no changes;
 * untouched elements are the same objects; every change names the input index it concerns; the
 * input is never mutated. The output is of the input's kind: the same format, elements repaired.
 */
export function repair<Item>(input: readonly Item[], options: RepairOptions = {}): RepairResult<Item> {
  const format = options.format;
  if (format === undefined || format === 'openai-chat')
    return guardInput('repair', input, () => repairChat(input as readonly Message[], options)) as RepairResult<Item>;
  const native = formatOf(format);
  return guardInput('repair', input, () => repairNative(native, input, options)) as RepairResult<Item>;
}
