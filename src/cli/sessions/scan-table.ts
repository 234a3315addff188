/**
 * What `unstuck scan` shows on a terminal: one row a session (agent, age, messages, problems, path) fitted to the
 * terminal's width, and a progress bar for long scans. Pure: the width comes from the caller (the terminal's columns).
 */

export interface ScanRow {
  agent: string;
  age: string;
  /** Undefined when the file could not be read. */
  messages: number | undefined;
  /** "ok", or the problems in a few words. */
  problems: string;
  path: string;
}

const HEADERS = { agent: 'AGENT', age: 'AGE', messages: 'MESSAGES', problems: 'PROBLEMS', path: 'PATH' } as const;
const GAP = '  ';
/** The narrowest a path or problems column gets, however narrow the terminal. */
const MIN_PATH = 12;
const MIN_PROBLEMS = 8;

/**
 * The table's lines, none wider than `width` (when the terminal is too narrow even for the narrowest columns, lines
 * are as narrow as they can be). The path column takes what is left, shortened from the left (`…/projects/x.jsonl`:
 * the file's own name is what tells sessions apart); the problems column is cut at the right with `…`.
 */
export function renderScanTable(rows: readonly ScanRow[], width: number): string[] {
  const cells = rows.map((row) => ({
    agent: row.agent,
    age: row.age,
    messages: row.messages === undefined ? '-' : String(row.messages),
    problems: row.problems,
    path: row.path,
  }));
  const widest = (key: keyof typeof HEADERS) =>
    Math.max(HEADERS[key].length, ...cells.map((cell) => displayWidth(cell[key])));
  const agent = widest('agent');
  const age = widest('age');
  const messages = widest('messages');
  const fixed = agent + age + messages + GAP.length * 4;
  const room = Math.max(MIN_PATH + MIN_PROBLEMS, width - fixed);
  const pathWanted = widest('path');
  const problemsWanted = widest('problems');
  // The path gets what it needs when it can; the problems at least a third of the room.
  let problems = Math.min(problemsWanted, Math.max(MIN_PROBLEMS, Math.floor(room / 3), room - pathWanted));
  const path = Math.max(MIN_PATH, Math.min(pathWanted, room - problems));
  problems = Math.max(MIN_PROBLEMS, Math.min(problemsWanted, room - path));
  const line = (cell: Record<keyof typeof HEADERS, string>) =>
    [
      padEnd(cell.agent, agent),
      padEnd(cell.age, age),
      padStart(cell.messages, messages),
      padEnd(cutRight(cell.problems, problems), problems),
      cutLeft(cell.path, path),
    ]
      .join(GAP)
      .trimEnd();
  return [line(HEADERS), ...cells.map(line)];
}

/** `scanning ███████░░░░░░░  120/400 files`, at most `width` wide (the bar shrinks; never below 10 cells). */
export function renderProgress(done: number, total: number, width: number): string {
  const counter = ` ${done}/${total} files`;
  const label = 'scanning ';
  const cells = Math.max(10, Math.min(40, width - label.length - counter.length - 1));
  const filled = total <= 0 ? cells : Math.min(cells, Math.floor((done / total) * cells));
  return `${label}${'█'.repeat(filled)}${'░'.repeat(cells - filled)}${counter}`;
}

/** Columns a string takes: one a code point (East Asian wide and emoji as two). */
function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) width += isWide(char.codePointAt(0) as number) ? 2 : 1;
  return width;
}

function isWide(code: number): boolean {
  return (
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f300 && code <= 0x1faff) ||
    (code >= 0x20000 && code <= 0x3fffd)
  );
}

function padEnd(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}

function padStart(text: string, width: number): string {
  return ' '.repeat(Math.max(0, width - displayWidth(text))) + text;
}

/** At most `width` columns: the end cut off, `…` in its place. */
function cutRight(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  let out = '';
  for (const char of text) {
    if (displayWidth(out + char) > width - 1) break;
    out += char;
  }
  return `${out}…`;
}

/** At most `width` columns: the start cut off, `…` in its place (a path's file name stays). */
function cutLeft(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  const chars = [...text];
  let out = '';
  for (let index = chars.length - 1; index >= 0; index -= 1) {
    if (displayWidth((chars[index] as string) + out) > width - 1) break;
    out = (chars[index] as string) + out;
  }
  return `…${out}`;
}
