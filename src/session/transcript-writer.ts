/** Writes the Markdown transcript (format: transcript-codec.ts). */
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { Message } from '../core/messages.js';
import { textOf } from '../core/messages.js';
import type { Fence } from './fence.js';
import { fenceFor, stepFence } from './fence.js';
import type { SegmentRef } from './transcript-syntax.js';
import { FORMAT_VERSION, MARKER_PREFIX, MARKER_SUFFIX } from './transcript-syntax.js';

/** `<!--` that could start a marker or a header line: escaped in readable text with a zero-width space. */
const LOOKALIKE = /<!--(?=\s*(?:nf-msg|unstuck-))/gi;

/** Writes a whole session as one transcript text (no segment files). */
export function formatTranscript(messages: readonly Message[]): string {
  return formatTranscriptText(messages, { first: 1, total: messages.length, segments: [] });
}

export interface FormatOptions {
  /** Number of the first message in this file (1-based), for the headings. */
  first: number;
  /** Messages in the whole session, declared in the header. */
  total: number;
  /** Segment files holding the messages before this file's own. */
  segments: readonly Omit<SegmentRef, 'line'>[];
}

export function formatTranscriptText(messages: readonly Message[], options: FormatOptions): string {
  // Every message's JSON, followed by a comma, in one buffer: the digest covers it, and each
  // marker is a base64 slice of it (fewer, larger allocations than one buffer per message).
  const jsons: string[] = new Array<string>(messages.length);
  let total = 0;
  for (let index = 0; index < messages.length; index += 1) {
    const json = JSON.stringify(messages[index]);
    if (typeof json !== 'string') throw new TypeError(`message ${options.first + index} is not JSON-serializable`);
    jsons[index] = json;
    total += Buffer.byteLength(json, 'utf8') + 1;
  }
  const all = Buffer.allocUnsafe(total);
  const ends: number[] = new Array<number>(messages.length);
  let offset = 0;
  for (let index = 0; index < jsons.length; index += 1) {
    offset += all.write(jsons[index]!, offset, 'utf8');
    ends[index] = offset;
    all[offset] = 0x2c;
    offset += 1;
  }
  const digest = createHash('sha256').update(all).digest('hex');
  const parts: string[] = [];
  parts.push(`<!-- unstuck-session v${FORMAT_VERSION} messages=${options.total}${options.first > 1 ? ` first=${options.first}` : ''} digest=sha256:${digest} -->\n`);
  parts.push('# Session transcript\n\n');
  parts.push(`_${options.total} message${options.total === 1 ? '' : 's'}. Each message ends with an \`nf-msg\` marker line that holds it exactly; the text above a marker is for reading and may be shortened._\n\n`);
  if (options.segments.length > 0) {
    let from = 1;
    for (const segment of options.segments) {
      const to = from + segment.messages - 1;
      parts.push(`<!-- unstuck-segment messages=${segment.messages} sha256=${segment.sha256} file=${encodeURIComponent(segment.file)} -->\n`);
      parts.push(`- [messages ${from}–${to}](${encodeURI(segment.file)})\n`);
      from = to + 1;
    }
    parts.push('\n');
  }
  let text = parts.join('');
  let start = 0;
  for (let index = 0; index < messages.length; index += 1) {
    text += readable(messages[index]!, options.first + index);
    text += `${MARKER_PREFIX}${all.toString('base64', start, ends[index])}${MARKER_SUFFIX}\n\n`;
    start = ends[index]! + 1;
  }
  return text;
}

/** One message's heading and readable body (everything above its marker line). */
function readable(message: Message, number: number): string {
  const parts: string[] = [];
  let heading = `## ${number} · ${inline(String(message.role))}`;
  if (typeof message.name === 'string') heading += ` · ${inline(message.name)}`;
  if (typeof message.tool_call_id === 'string') heading += ` · \`${inline(message.tool_call_id)}\``;
  parts.push(`${heading}\n\n`);
  if (typeof message.reasoning_content === 'string' && message.reasoning_content !== '') {
    parts.push('**Reasoning**\n\n', fenced(message.reasoning_content));
  }
  const text = textOf(message.content);
  if (message.role === 'tool') {
    parts.push(text === '' ? '_(no content)_\n\n' : fenced(text));
  } else if (text !== '') {
    parts.push(markdown(text));
  } else if (!Array.isArray(message.tool_calls) || message.tool_calls.length === 0) {
    parts.push('_(no content)_\n\n');
  }
  if (Array.isArray(message.content)) {
    for (const part of message.content) {
      if (part !== null && typeof part === 'object' && part.type !== 'text') parts.push(`_[${inline(String(part.type))} part]_\n\n`);
    }
  }
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      const name = typeof call?.function?.name === 'string' ? call.function.name : '?';
      const id = typeof call?.id === 'string' ? ` · \`${inline(call.id)}\`` : '';
      const args = typeof call?.function?.arguments === 'string' ? call.function.arguments : '';
      parts.push(`**Tool call** \`${inline(name)}\`${id}\n\n`, fenced(args, 'json'));
    }
  }
  return parts.join('');
}

const SHORT_CHARS = 2000;
const SHORT_LINES = 40;

/** Long text in a fence nothing inside can close, shortened: the marker keeps the full text. */
function fenced(text: string, info = 'text'): string {
  let shown = text.length > SHORT_CHARS ? text.slice(0, SHORT_CHARS) : text;
  let lineEnd = -1;
  for (let count = 0; count < SHORT_LINES; count += 1) {
    lineEnd = shown.indexOf('\n', lineEnd + 1);
    if (lineEnd === -1) break;
  }
  if (lineEnd !== -1) shown = shown.slice(0, lineEnd);
  const escaped = escapeLookalikes(shown);
  const fence = fenceFor(escaped);
  const omitted = text.length - shown.length;
  const note = omitted > 0 ? `_… ${omitted} more characters, kept in the marker below._\n\n` : '';
  return `${fence}${info}\n${escaped}\n${fence}\n\n${note}`;
}

/** Text as Markdown, with lookalikes escaped and any fence it leaves open closed. */
function markdown(text: string): string {
  const escaped = escapeLookalikes(text);
  let closer = '';
  if (escaped.includes('```') || escaped.includes('~~~')) {
    let fence: Fence | undefined;
    let start = 0;
    while (start <= escaped.length) {
      let end = escaped.indexOf('\n', start);
      if (end === -1) end = escaped.length;
      fence = stepFence(fence, escaped.slice(start, end));
      start = end + 1;
    }
    if (fence !== undefined) closer = `\n${fence.char.repeat(fence.length)}`;
  }
  return `${escaped}${closer}\n\n`;
}

function escapeLookalikes(text: string): string {
  return text.includes('<!--') ? text.replace(LOOKALIKE, '<!--\u200b') : text;
}

function inline(text: string): string {
  const flat = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return escapeLookalikes(flat.replace(/[\r\n`]/g, ' '));
}
