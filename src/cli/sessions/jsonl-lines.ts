/** What the JSONL session readers (Claude Code, Codex, Gemini CLI, Qwen Code) share to read a file line by line. */

/** One line's JSON value, or undefined when the line does not parse (a torn or hand-edited line: kept, not read). */
export function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** The first `count` lines of a text, without splitting the whole of it (detection looks at a file's head only). */
export function* firstLines(text: string, count: number): Generator<string> {
  let start = 0;
  for (let index = 0; index < count && start < text.length; index += 1) {
    const end = text.indexOf('\n', start);
    yield text.slice(start, end === -1 ? text.length : end);
    if (end === -1) return;
    start = end + 1;
  }
}
