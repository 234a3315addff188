/**
 * What a person changed in a transcript's readable text. Only called when the header's `readable`
 * digest does not match the text while the markers are intact, so its cost (rendering every
 * message again, as the writer does) is paid only by files edited by hand.
 *
 * The markers stay the authority for the messages they hold; the readable text is compared with
 * what the writer renders for each of them:
 *  - text that is not what the writer rendered is an edit: reported, naming the message and line,
 *    because the next save renders the message from its marker again and the edit is gone;
 *  - a heading with text and no marker, between messages or after the last (a message added by
 *    hand), is read as a message of the role its heading names, and reported: the next save gives
 *    it its marker, so it is kept, not dropped.
 */
import { Buffer } from 'node:buffer';
import type { Message } from '../core/messages.js';
import { readable } from './transcript-writer.js';
import type { SessionProblem } from './types.js';

export interface HandEditInput {
  /** The file's text after its header line's line break (a latin1 view of UTF-8 bytes when `latin1`). */
  view: string;
  latin1: boolean;
  file: string;
  /** Where the readable text starts (just after the header line). */
  start: number;
  /** Line-start offsets of the marker lines, and the line end (offset of its `\n`, or the text's length) of each. */
  markers: readonly { offset: number; end: number }[];
  /** The messages the markers hold, one per marker, in order. */
  messages: readonly Message[];
  /** Number of the first message, as the headings count. */
  first: number;
  lineAt(offset: number): number;
}

/** Edited messages named one by one; the rest are counted in one problem (an editor's reformatting touches every message). */
const REPORTED_EDITS = 10;

const ROLES = new Set(['user', 'assistant', 'system', 'developer', 'tool']);

export function findHandEdits(input: HandEditInput): { messages: Message[]; problems: SessionProblem[] } {
  const { view, latin1, file, markers, messages, first, lineAt } = input;
  const problems: SessionProblem[] = [];
  const out: Message[] = [];
  const asView = (text: string) => (latin1 ? Buffer.from(text, 'utf8').toString('latin1') : text);
  let edited = 0;
  for (let index = 0; index < markers.length; index += 1) {
    const marker = markers[index]!;
    const from = index === 0 ? input.start : markers[index - 1]!.end + 1;
    const region = view.slice(from, marker.offset);
    const expected = asView(readable(messages[index]!, first + index));
    if (region.endsWith(expected)) {
      let added = region.slice(0, region.length - expected.length);
      let addedAt = from;
      if (index === 0) {
        // Above the first message: the title and segment lines, then whatever was added.
        const heading = /^## /m.exec(added);
        addedAt = heading === null ? from + added.length : from + heading.index;
        added = heading === null ? '' : added.slice(heading.index);
      }
      if (added.trim() !== '') out.push(...readAdded(added, addedAt));
    } else {
      edited += 1;
      if (edited <= REPORTED_EDITS) {
        const line = lineAt(
          index === 0 ? headingBefore(view, from, marker.offset) : from + (view.charCodeAt(from) === 0x0a ? 1 : 0),
        );
        problems.push({
          file,
          line,
          why: `the readable text of message ${first + index} was edited by hand: its nf-msg marker holds the message and wins, so the edit is not kept when the session is saved`,
        });
      }
    }
    out.push(messages[index]!);
  }
  if (edited > REPORTED_EDITS) {
    problems.push({
      file,
      why: `the readable text of ${edited - REPORTED_EDITS} more message(s) was edited too (an editor that trims spaces or changes line ends does this): those edits are not kept either`,
    });
  }
  const tailFrom = markers.length === 0 ? input.start : markers[markers.length - 1]!.end + 1;
  let tail = view.slice(tailFrom);
  let tailAt = tailFrom;
  if (markers.length === 0) {
    const heading = /^## /m.exec(tail);
    tailAt = heading === null ? tailFrom + tail.length : tailFrom + heading.index;
    tail = heading === null ? '' : tail.slice(heading.index);
  }
  if (tail.trim() !== '') out.push(...readAdded(tail, tailAt));
  if (problems.length === 0 && out.length === messages.length) {
    problems.push({
      file,
      line: 1,
      why: 'the readable text was edited by hand outside any message (the title or the segment list): the edit is not kept when the session is saved',
    });
  }
  return { messages: out, problems };

  /** Messages added by hand in `text` (at offset `at`): each heading naming a role starts one. */
  function readAdded(text: string, at: number): Message[] {
    const added: Message[] = [];
    const headings = [...text.matchAll(/^## (.*)$/gm)];
    const before = headings.length === 0 ? text : text.slice(0, headings[0]!.index);
    if (before.trim() !== '') {
      problems.push({
        file,
        line: lineAt(at + before.search(/\S/)),
        why: 'text added by hand outside any message (no "## N · role" heading above it): it is not kept when the session is saved',
      });
    }
    for (const [number, heading] of headings.entries()) {
      const start = heading.index;
      const end = headings[number + 1]?.index ?? text.length;
      const title = decode(heading[1]!);
      const content = decode(text.slice(start + heading[0].length, end)).trim();
      const message = messageOf(title, content);
      const line = lineAt(at + start);
      if (message === undefined) {
        problems.push({
          file,
          line,
          why: `heading "## ${title.slice(0, 60)}" added by hand names no role (user, assistant, system, developer, or tool with its \`call id\`): its text is not kept when the session is saved`,
        });
        continue;
      }
      problems.push({
        file,
        line,
        why: `message added by hand (a heading and text, no nf-msg marker): read as a ${message.role} message; saving the session gives it its marker`,
      });
      added.push(message);
    }
    return added;
  }

  function decode(text: string): string {
    return latin1 ? Buffer.from(text, 'latin1').toString('utf8') : text;
  }
}

/** `## 12 · user`, `## user`, `## 3 · tool · \`call_1\``: the role (and a tool result's call id) a heading names. */
function messageOf(title: string, content: string): Message | undefined {
  const parts = title
    .split('·')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  // The number in front (`12`, or `12b` for one put between 12 and 13) is not the role.
  if (parts.length > 1 && !ROLES.has(parts[0]!.toLowerCase())) parts.shift();
  const role = parts[0]?.toLowerCase();
  if (role === undefined || !ROLES.has(role)) return undefined;
  if (role === 'tool') {
    const id = parts
      .slice(1)
      .map((part) => /^`([^`]+)`$/.exec(part)?.[1])
      .find((value) => value !== undefined);
    return id === undefined ? undefined : { role: 'tool', tool_call_id: id, content };
  }
  return { role, content } as Message;
}

/** Start of the last `## ` heading line between `from` and `to` (where message 0's rendering should begin), or `from`. */
function headingBefore(view: string, from: number, to: number): number {
  const at = view.lastIndexOf('\n## ', to);
  return at >= from - 1 && at !== -1 ? at + 1 : from;
}
