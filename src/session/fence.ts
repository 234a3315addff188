/**
 * Fenced code blocks, the way CommonMark reads them (spec §4.5), reduced to what decides whether a
 * line is inside one. The writer and the reader call the same function on the same lines, so a
 * fence the writer closed is a fence the reader sees closed.
 */
export interface Fence {
  char: '`' | '~';
  length: number;
}

const OPENER = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const CLOSER = /^ {0,3}(`{3,}|~{3,})[ \t]*\r?$/;

/** The fence state after `line`, given the state before it. */
export function stepFence(fence: Fence | undefined, line: string): Fence | undefined {
  const first = line.charCodeAt(0);
  // Fast path: a fence line starts with a space, a backtick or a tilde.
  if (first !== 0x20 && first !== 0x60 && first !== 0x7e) return fence;
  if (fence !== undefined) {
    const match = CLOSER.exec(line);
    if (match !== null && match[1]!.charAt(0) === fence.char && match[1]!.length >= fence.length) return undefined;
    return fence;
  }
  const match = OPENER.exec(line);
  if (match === null) return undefined;
  const run = match[1]!;
  // A backtick fence's info string may not contain a backtick (otherwise it is inline code).
  if (run.charAt(0) === '`' && match[2]!.includes('`')) return undefined;
  return { char: run.charAt(0) as '`' | '~', length: run.length };
}

/** A fence of backticks longer than any run of backticks in `text`, so nothing in it can close it. */
export function fenceFor(text: string): string {
  let longest = 0;
  let index = text.indexOf('```');
  while (index !== -1) {
    let end = index;
    while (text.charCodeAt(end) === 0x60) end += 1;
    if (end - index > longest) longest = end - index;
    index = text.indexOf('```', end);
  }
  return '`'.repeat(Math.max(3, longest + 1));
}
