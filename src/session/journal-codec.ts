import type { Message } from '../core/messages.js';
import { isMessage } from '../core/messages.js';
import { BOUNDARY_TEXT, startsWithRole } from './message-json.js';
import type { LoadResult } from './types.js';

/**
 * The JSONL journal: one message per line, JSON as `JSON.stringify` writes it (newlines inside
 * strings are escaped, lone surrogates become `\udXXX`), so a line break is always a boundary.
 * A last line without its newline is an append that did not finish: reported and ignored. A bad
 * line anywhere else is damage, reported with its line number; the lines around it still load.
 */
export function formatJournal(messages: readonly Message[]): string {
  // Concatenation builds a rope that is flattened once, when written: cheaper than join here.
  let text = '';
  for (let start = 0; start < messages.length; start += FORMAT_MESSAGES) {
    const group =
      start === 0 && messages.length <= FORMAT_MESSAGES ? messages : messages.slice(start, start + FORMAT_MESSAGES);
    text += linesOf(group, start + 1);
  }
  return text;
}

/** Messages stringified by one call: large enough to amortize it, small enough for the young heap. */
const FORMAT_MESSAGES = 4096;

/**
 * One JSON.stringify of the array, with the places between messages turned into line breaks,
 * when those places can be found for certain (see message-json.ts: every message starts with
 * `role`, and `},{"role":` occurs exactly n-1 times); otherwise one call per message.
 */
function linesOf(messages: readonly Message[], first: number): string {
  if (messages.every(startsWithRole)) {
    const array = JSON.stringify(messages);
    let cuts = 0;
    for (
      let at = array.indexOf(BOUNDARY_TEXT);
      at !== -1 && cuts < messages.length;
      at = array.indexOf(BOUNDARY_TEXT, at + 2)
    )
      cuts += 1;
    if (cuts === messages.length - 1) return `${array.slice(1, -1).replaceAll(BOUNDARY_TEXT, '}\n{"role":')}\n`;
  }
  let text = '';
  for (let index = 0; index < messages.length; index += 1) {
    const line = JSON.stringify(messages[index]);
    if (typeof line !== 'string') throw new TypeError(`message ${first + index} is not JSON-serializable`);
    text += `${line}\n`;
  }
  return text;
}

export function parseJournal(text: string, options: { file?: string } = {}): LoadResult {
  const result: LoadResult = { messages: [], problems: [] };
  parseJournalLines(text, { file: options.file ?? '<journal>', firstLine: 1, last: true }, result);
  return result;
}

/**
 * Reads `text` line by line into `into`, numbering its lines from `firstLine`. `last` says the
 * text ends where the journal does: then a last line without its line break is an append that
 * did not finish (a piece of a longer file ends at a line break, and its last line is whole).
 * Returns how many lines it read.
 */
export function parseJournalLines(
  text: string,
  options: { file: string; firstLine: number; last: boolean },
  into: LoadResult,
): number {
  const { file } = options;
  const { messages, problems } = into;
  let start = 0;
  let lineNumber = options.firstLine - 1;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    const torn = end === -1 && options.last;
    if (end === -1) end = text.length;
    const line = text.slice(start, end);
    lineNumber += 1;
    start = end + 1;
    if (line === '' || (line.charCodeAt(0) <= 0x20 && line.trim() === '')) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      problems.push(
        torn
          ? { file, line: lineNumber, why: 'the last line is cut short (an append that did not finish): ignored' }
          : {
              file,
              line: lineNumber,
              why: `corrupt line, not JSON (${(error as Error).message}): this message was not recovered`,
            },
      );
      continue;
    }
    if (!isMessage(value)) {
      problems.push({
        file,
        line: lineNumber,
        why: 'line is JSON but not a message (an object with a string role): not recovered',
      });
      continue;
    }
    messages.push(value);
  }
  return lineNumber - options.firstLine + 1;
}
