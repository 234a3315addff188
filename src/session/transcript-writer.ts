/** Writes the Markdown transcript (format: transcript-codec.ts). */
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { Message } from '../core/messages.js';
import { textOf } from '../core/messages.js';
import type { Fence } from './fence.js';
import { fenceFor, stepFence } from './fence.js';
import type { EncodedMessages } from './message-json.js';
import { encodeMessages } from './message-json.js';
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
  /**
   * Declare the digest of the readable text in the header, so a reader can tell hand edits (default
   * false). The store's main file does; a segment file does without (its main file declares the
   * whole file's sha256), and so does formatTranscript's text: hashing a 4 MB string means encoding
   * it to UTF-8, which costs about as much as formatting it.
   */
  readableDigest?: boolean;
}

export function formatTranscriptText(messages: readonly Message[], options: FormatOptions): string {
  const { groups, digest } = encodeGroups(messages, options.first);
  let text = headBody(options);
  let index = 0;
  for (const { bytes, ends } of groups) {
    let start = 0;
    for (const end of ends) {
      text += readable(messages[index]!, options.first + index);
      text += `${MARKER_PREFIX}${bytes.toString('base64', start, end)}${MARKER_SUFFIX}\n\n`;
      start = end + 1;
      index += 1;
    }
  }
  return (
    headerLine(
      options,
      digest,
      options.readableDigest === true ? createHash('sha256').update(text, 'utf8').digest('hex') : undefined,
    ) + text
  );
}

/** Bytes per buffer of formatTranscriptBytes: a few syscalls per segment, little slack. */
const PART_BYTES = 256 * 1024;
const MARKER_START = Buffer.from(MARKER_PREFIX, 'latin1');
const MARKER_END = Buffer.from(`${MARKER_SUFFIX}\n\n`, 'latin1');

/**
 * The same file as formatTranscriptText, as UTF-8 bytes in a few buffers, for writing. Built
 * without the text: each readable part is encoded on its own (small), and each base64 payload is
 * ASCII, copied as latin1. Encoding the whole text instead costs more than formatting it (V8 walks
 * the thousands of pieces it was concatenated from, widening them to UTF-16 on the way).
 */
export function formatTranscriptBytes(messages: readonly Message[], options: FormatOptions): Buffer[] {
  const { groups, digest } = encodeGroups(messages, options.first);
  // The header comes first but declares the digest of everything after it: filled in at the end.
  const parts: Buffer[] = [Buffer.alloc(0), Buffer.from(headBody(options), 'utf8')];
  let part = Buffer.allocUnsafe(PART_BYTES);
  let position = 0;
  let index = 0;
  for (const { bytes, ends } of groups) {
    let start = 0;
    for (const end of ends) {
      const text = readable(messages[index]!, options.first + index);
      // UTF-8 takes at most 3 bytes per UTF-16 unit; base64 4 per 3 bytes.
      const most = text.length * 3 + MARKER_START.length + Math.ceil((end - start) / 3) * 4 + MARKER_END.length;
      if (position + most > part.length) {
        parts.push(part.subarray(0, position));
        part = Buffer.allocUnsafe(Math.max(PART_BYTES, most));
        position = 0;
      }
      position += part.write(text, position, 'utf8');
      position += MARKER_START.copy(part, position);
      position += part.write(bytes.toString('base64', start, end), position, 'latin1');
      position += MARKER_END.copy(part, position);
      start = end + 1;
      index += 1;
    }
  }
  if (position > 0) parts.push(part.subarray(0, position));
  let readableDigest: string | undefined;
  if (options.readableDigest === true) {
    const hash = createHash('sha256');
    for (let at = 1; at < parts.length; at += 1) hash.update(parts[at]!);
    readableDigest = hash.digest('hex');
  }
  parts[0] = Buffer.from(headerLine(options, digest, readableDigest), 'latin1');
  return parts;
}

/**
 * The header line. `digest` covers the markers' JSON (what the messages are); `readable` covers
 * every byte after the header line (what a person sees), so a reader can tell that the text was
 * edited or a message added by hand while the markers stayed the same.
 */
function headerLine(options: FormatOptions, digest: string, readableDigest: string | undefined): string {
  return `<!-- unstuck-session v${FORMAT_VERSION} messages=${options.total}${options.first > 1 ? ` first=${options.first}` : ''} digest=sha256:${digest}${readableDigest === undefined ? '' : ` readable=sha256:${readableDigest}`} -->\n`;
}

/** The title and the segment declarations: everything between the header line and the first message. */
function headBody(options: FormatOptions): string {
  let text = '# Session transcript\n\n';
  text += `_${options.total} message${options.total === 1 ? '' : 's'}. Each message ends with an \`nf-msg\` marker line that holds it exactly; the text above a marker is for reading and may be shortened._\n\n`;
  if (options.segments.length > 0) {
    let from = 1;
    for (const segment of options.segments) {
      const to = from + segment.messages - 1;
      text += `<!-- unstuck-segment messages=${segment.messages} sha256=${segment.sha256} file=${encodeURIComponent(segment.file)} -->\n`;
      text += `- [messages ${from}–${to}](${encodeURI(segment.file)})\n`;
      from = to + 1;
    }
    text += '\n';
  }
  return text;
}

/** Messages encoded at a time: large enough to amortize the calls, small enough for the young heap. */
const ENCODE_MESSAGES = 8192;

/**
 * Every message's JSON (see message-json.ts), a group of messages per buffer, and the digest
 * over them: the marker payloads are their base64.
 */
function encodeGroups(messages: readonly Message[], first: number): { groups: EncodedMessages[]; digest: string } {
  const groups: EncodedMessages[] = [];
  const hash = createHash('sha256');
  for (let offset = 0; offset < messages.length; offset += ENCODE_MESSAGES) {
    const group = encodeMessages(messages.slice(offset, offset + ENCODE_MESSAGES), first + offset);
    hash.update(group.bytes);
    groups.push(group);
  }
  return { groups, digest: hash.digest('hex') };
}

/** One message's heading and readable body (everything above its marker line), as the writer renders it. */
export function readable(message: Message, number: number): string {
  // Concatenation builds a rope that is flattened once, when the file is written: cheaper than join.
  let out = `## ${number} · ${inline(String(message.role))}`;
  if (typeof message.name === 'string') out += ` · ${inline(message.name)}`;
  if (typeof message.tool_call_id === 'string') out += ` · \`${inline(message.tool_call_id)}\``;
  out += '\n\n';
  if (typeof message.reasoning_content === 'string' && message.reasoning_content !== '') {
    out += '**Reasoning**\n\n';
    out += fenced(message.reasoning_content);
  }
  const text = textOf(message.content);
  if (message.role === 'tool') {
    out += text === '' ? '_(no content)_\n\n' : fenced(text);
  } else if (text !== '') {
    out += markdown(text);
  } else if (!Array.isArray(message.tool_calls) || message.tool_calls.length === 0) {
    out += '_(no content)_\n\n';
  }
  if (Array.isArray(message.content)) {
    for (const part of message.content) {
      if (part !== null && typeof part === 'object' && part.type !== 'text')
        out += `_[${inline(String(part.type))} part]_\n\n`;
    }
  }
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      const name = typeof call?.function?.name === 'string' ? call.function.name : '?';
      const id = typeof call?.id === 'string' ? ` · \`${inline(call.id)}\`` : '';
      const args = typeof call?.function?.arguments === 'string' ? call.function.arguments : '';
      out += `**Tool call** \`${inline(name)}\`${id}\n\n`;
      out += fenced(args, 'json');
    }
  }
  return out;
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

const INLINE_BREAKERS = /[\r\n`]/;

function inline(text: string): string {
  const flat = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return escapeLookalikes(INLINE_BREAKERS.test(flat) ? flat.replace(/[\r\n`]/g, ' ') : flat);
}
