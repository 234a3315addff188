import type { Message } from '../core/messages.js';
import { isMessage } from '../core/messages.js';
import type { LoadResult, SessionProblem } from './types.js';

/**
 * The JSONL journal: one message per line, JSON as `JSON.stringify` writes it (newlines inside
 * strings are escaped, lone surrogates become `\udXXX`), so a line break is always a boundary.
 * A last line without its newline is an append that did not finish: reported and ignored. A bad
 * line anywhere else is damage, reported with its line number; the lines around it still load.
 */
export function formatJournal(messages: readonly Message[]): string {
  let text = '';
  const lines: string[] = [];
  for (let index = 0; index < messages.length; index += 1) {
    const line = JSON.stringify(messages[index]);
    if (typeof line !== 'string') throw new TypeError(`message ${index + 1} is not JSON-serializable`);
    lines.push(line);
  }
  if (lines.length > 0) text = `${lines.join('\n')}\n`;
  return text;
}

export function parseJournal(text: string, options: { file?: string } = {}): LoadResult {
  const file = options.file ?? '<journal>';
  const fast = parseWhole(text);
  if (fast !== undefined) return { messages: fast, problems: [] };
  const messages: Message[] = [];
  const problems: SessionProblem[] = [];
  let start = 0;
  let lineNumber = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    const torn = end === -1;
    if (torn) end = text.length;
    const line = text.slice(start, end);
    lineNumber += 1;
    start = end + 1;
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      problems.push(torn
        ? { file, line: lineNumber, why: 'the last line is cut short (an append that did not finish): ignored' }
        : { file, line: lineNumber, why: `corrupt line, not JSON (${(error as Error).message}): this message was not recovered` });
      continue;
    }
    if (!isMessage(value)) {
      problems.push({ file, line: lineNumber, why: 'line is JSON but not a message (an object with a string role): not recovered' });
      continue;
    }
    messages.push(value);
  }
  return { messages, problems };
}

/**
 * The common case, a journal without damage, parsed in one `JSON.parse`: raw line breaks never
 * occur inside JSON text, so joining the lines with commas makes the array. Any irregularity
 * (blank line, damage, a non-message) falls back to the line-by-line reader.
 */
function parseWhole(text: string): Message[] | undefined {
  if (text === '') return [];
  if (!text.endsWith('\n') || text.includes('\n\n') || text.includes('\r')) return undefined;
  let values: unknown;
  try {
    values = JSON.parse(`[${text.slice(0, -1).replaceAll('\n', ',')}]`);
  } catch {
    return undefined;
  }
  // One value per line: a line holding `{…},{…}` would otherwise pass as two messages.
  if (!Array.isArray(values) || values.length !== countLines(text)) return undefined;
  for (const value of values) if (!isMessage(value)) return undefined;
  return values as Message[];
}

function countLines(text: string): number {
  let count = 0;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) count += 1;
  return count;
}
