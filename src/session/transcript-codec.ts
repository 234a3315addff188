/**
 * The Markdown transcript: readable in any Markdown viewer, and exact. Each message is a heading,
 * a readable rendering, and then one line `<!-- nf-msg BASE64 -->` holding the UTF-8 JSON of the
 * message: that line alone is the authority when the file is read back (the NexForgeCLI marker, so
 * its files load too). The readable part may be shortened or escaped; the marker never is.
 *
 * What makes content unable to forge a message (the NexForgeCLI 0.4.1 "ghost message" bug):
 *  - on write, anything in the readable part that could be read as a marker or a header gets a
 *    zero-width space after its `<!--`;
 *  - on read, only a marker that is a whole line, outside fenced content, counts;
 *  - the writer closes any fence that content left open, so a real marker is never inside one.
 */

import { countProblems, parseTranscriptText } from './transcript-reader.js';
import type { LoadResult } from './types.js';

export { formatTranscript } from './transcript-writer.js';

/** Reads a transcript's text. Never throws: every whole message comes back, `problems` lists the rest. */
export function parseTranscript(text: string, options: { file?: string } = {}): LoadResult {
  const file = options.file ?? '<transcript>';
  const parsed = parseTranscriptText(text, file);
  const problems = parsed.problems;
  for (const segment of parsed.segments) {
    problems.push({
      file,
      line: segment.line,
      why: `declares segment file ${segment.file} (${segment.messages} messages), which parseTranscript does not read: load the file with createTranscriptStore`,
    });
  }
  if (parsed.segments.length === 0) problems.push(...countProblems(file, parsed.declared, parsed.messages.length));
  return { messages: parsed.messages, problems };
}
