/** Reads the Markdown transcript (format: transcript-codec.ts): never throws, lists what it cannot read. */
import { Buffer, isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { Message } from '../core/messages.js';
import { isMessage } from '../core/messages.js';
import type { Fence } from './fence.js';
import { stepFence } from './fence.js';
import { findHandEdits } from './transcript-hand-edits.js';
import type { SegmentRef } from './transcript-syntax.js';
import { FORMAT_VERSION, MARKER_PREFIX, MARKER_SUFFIX } from './transcript-syntax.js';
import type { LoadResult, SessionProblem } from './types.js';
import { decodeUtf8 } from './utf8.js';

const HEADER = /^<!-- unstuck-session v(\d+)((?: [a-z]+=\S*)*) -->[ \t]*\r?$/;
const SEGMENT = /^<!-- unstuck-segment messages=(\d+) sha256=([0-9a-f]{64}) file=(\S+) -->[ \t]*\r?$/;

export interface ParsedTranscript extends LoadResult {
  /** Message count the header declares (the whole session, segments included), when there is a header. */
  declared?: number;
  /** The sha256 the header declares over the markers' JSON. */
  digest?: string;
  /** The sha256 the header declares over every byte after the header line (the readable text). */
  readable?: string;
  /** Number of this file's first message (the header's `first`, default 1). */
  first?: number;
  segments: SegmentRef[];
}

/**
 * The segment file names a transcript's head declares (`head`: the start of the file, at least up
 * to its first message), for a store that must not remove them.
 */
export function declaredSegmentNames(head: string): string[] {
  const names: string[] = [];
  for (const line of head.split('\n')) {
    if (line.startsWith('## ') || line.startsWith(MARKER_PREFIX)) break;
    const segment = SEGMENT.exec(line);
    if (segment === null) continue;
    try {
      const name = decodeURIComponent(segment[3]!);
      if (!name.includes('/') && !name.includes('\\')) names.push(name);
    } catch {
      // not a name this store could have written
    }
  }
  return names;
}

/** A problem when the header declared another number of messages than were read. */
export function countProblems(file: string, declared: number | undefined, found: number): SessionProblem[] {
  if (declared === undefined || declared === found) return [];
  return [
    {
      file,
      line: 1,
      why: `the header declares ${declared} messages but ${found} were read: ${declared > found ? `${declared - found} missing (file cut short or damaged)` : 'the file was edited'}`,
    },
  ];
}

/**
 * Reads a transcript. Fences are honoured (a marker inside fenced content is content), but when
 * the file shows damage (its digest does not match, or a fence never closes) and fenced blocks
 * swallowed marker lines, the text is read again with fences ignored: our writer escapes every
 * lookalike, so in its files a whole-line marker is real wherever it stands, and a damaged
 * backtick must not take the messages after it down with it.
 */
export function parseTranscriptText(text: string, file: string): ParsedTranscript {
  // A byte order mark (an editor's) must not hide the header: its count and digests are the checks.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const hashFrom = (offset: number) => createHash('sha256').update(body.slice(offset), 'utf8').digest('hex');
  return readOwnFile(body, file, false, hashFrom, false) ?? parseView(body, file, false);
}

/**
 * Reads a transcript file's bytes without decoding all of them as UTF-8 (as slow as JSON.parse
 * itself): every line that matters is ASCII, and UTF-8 never puts an ASCII byte inside a
 * multi-byte character, so a latin1 view of the bytes has the same lines, markers and fences.
 * `verified`: the caller knows the bytes are exactly what the writer wrote (the whole file's
 * sha256 matches the one its main file declares), so the markers' own digest is not computed.
 * `changed`: the caller knows they are not (that sha256 differs): if the markers are intact, the
 * readable text is compared with what the writer renders, to report edits and read messages
 * added by hand (segment files declare no readable digest of their own).
 */
export function parseTranscriptBytes(
  bytes: Buffer,
  file: string,
  options: { verified?: boolean; changed?: boolean } = {},
): ParsedTranscript {
  const body = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
  const text = body.toString('latin1');
  const hashFrom = (offset: number) => createHash('sha256').update(body.subarray(offset)).digest('hex');
  return (
    readOwnFile(text, file, options.verified === true, hashFrom, true, options.changed === true) ??
    parseView(text, file, true)
  );
}

const HEADER_START = '<!-- unstuck-session ';
const MARKER_LINE = `\n${MARKER_PREFIX}`;
const PREFIX_LENGTH = MARKER_PREFIX.length;
const HEADING_LINE = '\n## ';

/** What decoding feeds the markers' JSON to: their digest, or nothing. */
interface Digest {
  update(data: string | Uint8Array): Digest;
}

/** Stands in for the markers' digest when the caller has checked the whole file's digest already. */
const NO_DIGEST: Digest = { update: () => NO_DIGEST };

/**
 * The fast path for a file this module wrote: collect the whole-line markers with a string
 * search, skipping the readable text, and accept the result only if they match the header's
 * digest, i.e. they are exactly the markers the writer wrote, in order (our writer escapes every
 * lookalike and closes every fence, so fences cannot matter; content cannot write the header,
 * which is the first line). Anything else (no header, a mismatch, a marker line with anything
 * after its ` -->`) returns undefined and the full reader takes over, with fences, and lists what
 * it finds.
 */
function readOwnFile(
  text: string,
  file: string,
  verified: boolean,
  hashFrom: (offset: number) => string,
  latin1: boolean,
  changed = false,
): ParsedTranscript | undefined {
  if (!text.startsWith(HEADER_START)) return undefined;
  const first = text.indexOf(MARKER_LINE);
  // The head: header, title, segment declarations; it ends where the first message's heading starts.
  let headEnd = text.indexOf(HEADING_LINE);
  if (headEnd === -1 || (first !== -1 && first < headEnd)) headEnd = first === -1 ? text.length : first;
  const head = scanTranscript(text.slice(0, headEnd + 1), file, true, true, true).result;
  if (head.digest === undefined || head.problems.length > 0 || head.messages.length > 0) return undefined;
  const markers: (MarkerPayload & { end: number })[] = [];
  const suffix = MARKER_SUFFIX;
  let end = 0;
  for (let at = first; at !== -1; at = text.indexOf(MARKER_LINE, end)) {
    end = text.indexOf('\n', at + 1);
    if (end === -1) end = text.length;
    if (end - at - 1 < PREFIX_LENGTH + suffix.length || !text.startsWith(suffix, end - suffix.length)) return undefined;
    markers.push({ offset: at + 1, end, payload: text.slice(at + 1 + PREFIX_LENGTH, end - suffix.length) });
  }
  const messages: Message[] = [];
  const problems: SessionProblem[] = [];
  // The readable digest covers every byte after the header line, the markers too: when it
  // matches, the file is what the writer wrote, and the markers' own digest is not needed.
  const bodyStart = text.indexOf('\n') + 1;
  const intact = verified || (head.readable !== undefined && bodyStart > 0 && hashFrom(bodyStart) === head.readable);
  if (intact) {
    decodeMarkers(markers, file, { at: () => 0 }, messages, problems, NO_DIGEST);
    if (problems.length > 0) return undefined;
  } else {
    const digest = createHash('sha256');
    decodeMarkers(markers, file, { at: () => 0 }, messages, problems, digest);
    if (problems.length > 0 || digest.digest('hex') !== head.digest) return undefined;
  }
  const result: ParsedTranscript = { messages, problems, segments: head.segments };
  if (head.declared !== undefined) result.declared = head.declared;
  // The markers are intact but the text around them is not what the writer wrote (its digest
  // says so, or the caller knows the file's bytes changed): what did a person do to it?
  if (!intact && bodyStart > 0 && (head.readable !== undefined || changed)) {
    const edits = findHandEdits({
      view: text,
      latin1,
      file,
      start: bodyStart,
      markers,
      messages,
      first: head.first ?? 1,
      lineAt: createLineCounter(text).at,
    });
    result.messages = edits.messages;
    result.problems = edits.problems;
  }
  return result;
}

function parseView(text: string, file: string, latin1: boolean): ParsedTranscript {
  const fenced = scanTranscript(text, file, true, latin1);
  if (fenced.swallowed === 0 || !fenced.damaged) return fenced.result;
  const unfenced = scanTranscript(text, file, false, latin1);
  if (unfenced.result.messages.length <= fenced.result.messages.length) return fenced.result;
  unfenced.result.problems.unshift({
    file,
    why: `fenced blocks do not line up (damage?): ${fenced.swallowed} marker line(s) inside them were read as messages`,
  });
  return unfenced.result;
}

/** Lines that can change what a transcript means; every other line is readable text, skipped unread. */
const SIGNIFICANT = /^(?:<!--|## \d+ | {0,3}(?:```|~~~))/gm;

function scanTranscript(
  text: string,
  file: string,
  useFences: boolean,
  latin1: boolean,
  headOnly = false,
): { result: ParsedTranscript; swallowed: number; damaged: boolean } {
  const messages: Message[] = [];
  const problems: SessionProblem[] = [];
  const segments: SegmentRef[] = [];
  let declared: number | undefined;
  let declaredDigest: string | undefined;
  let declaredReadable: string | undefined;
  let declaredFirst: number | undefined;
  const digest = createHash('sha256');
  let fence: Fence | undefined;
  let fenceAt = 0;
  let markersInFence = 0;
  let swallowed = 0;
  let damaged = false;
  /** Offset of a heading not yet followed by its marker, or -1. */
  let pendingHeading = -1;
  const lines = createLineCounter(text);
  const markers: MarkerPayload[] = [];
  const pattern = new RegExp(SIGNIFICANT.source, 'gm');
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const start = match.index;
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    pattern.lastIndex = end;
    const line = text.slice(start, end);
    if (fence !== undefined) {
      if (line.startsWith(MARKER_PREFIX)) {
        markersInFence += 1;
        swallowed += 1;
      }
      fence = stepFence(fence, line);
      continue;
    }
    const first = line.charCodeAt(0);
    if (first === 0x3c /* < */) {
      if (line.startsWith(MARKER_PREFIX)) {
        readMarker(line, start);
      } else if (line.startsWith('<!-- unstuck-')) {
        if (messages.length === 0 && readDeclaration(line, start)) continue;
        problems.push({
          file,
          line: lines.at(start),
          why: `malformed or misplaced header line: ${preview(latin1 ? Buffer.from(line, 'latin1').toString('utf8') : line)}`,
        });
      }
    } else if (first === 0x23 /* # */) {
      if (pendingHeading === -1) pendingHeading = start;
    } else if (useFences) {
      const opened = stepFence(undefined, line);
      if (opened !== undefined) {
        fence = opened;
        fenceAt = start;
        markersInFence = 0;
      }
    }
  }
  decodeMarkers(markers, file, lines, messages, problems, digest);
  if (fence !== undefined && markersInFence > 0) {
    damaged = true;
    problems.push({
      file,
      line: lines.at(fenceAt),
      why: `a fenced block opened here is never closed; ${markersInFence} marker line(s) after it were read as content, not as messages`,
    });
  }
  if (!headOnly && declaredDigest !== undefined && digest.digest('hex') !== declaredDigest) {
    damaged = true;
    problems.push({
      file,
      line: 1,
      why: 'the marker lines do not match the digest in the header: the file was changed or damaged after it was saved',
    });
  }
  if (pendingHeading !== -1) {
    problems.push({
      file,
      line: lines.at(pendingHeading),
      why: 'a message starts here but its nf-msg marker line is missing (file cut short?): the message was not recovered',
    });
  }
  if (messages.length === 0 && declared === undefined && segments.length === 0 && /\S/.test(text)) {
    problems.push({ file, why: 'no nf-msg marker lines: this is not a session transcript, or it lost every marker' });
  }
  const result: ParsedTranscript = { messages, problems, segments };
  if (declared !== undefined) result.declared = declared;
  if (declaredDigest !== undefined) result.digest = declaredDigest;
  if (declaredReadable !== undefined) result.readable = declaredReadable;
  if (declaredFirst !== undefined) result.first = declaredFirst;
  return { result, swallowed, damaged };

  /** Checks a marker line's shape; the payloads are decoded for all markers at once, below. */
  function readMarker(line: string, offset: number): void {
    // This marker line ends the message above it, whole or not: its loss is reported here, once.
    pendingHeading = -1;
    let close = line.lastIndexOf(MARKER_SUFFIX);
    const tail = close === -1 ? '' : line.slice(close + MARKER_SUFFIX.length);
    if (close < MARKER_PREFIX.length - 1 || tail.trim() !== '') {
      problems.push({
        file,
        line: lines.at(offset),
        why: 'incomplete nf-msg marker (no closing -->): the message was not recovered',
      });
      return;
    }
    if (close < MARKER_PREFIX.length) close = MARKER_PREFIX.length;
    markers.push({ offset, payload: line.slice(MARKER_PREFIX.length, close) });
  }

  function readDeclaration(line: string, offset: number): boolean {
    const header = HEADER.exec(line);
    if (header !== null) {
      if (Number(header[1]) > FORMAT_VERSION) {
        problems.push({
          file,
          line: lines.at(offset),
          why: `written by a newer format (v${header[1]}); reading it as v${FORMAT_VERSION}`,
        });
      }
      const count = /(?:^| )messages=(\d+)(?: |$)/.exec(header[2] ?? '');
      if (count !== null) declared = Number(count[1]);
      const sum = /(?:^| )digest=sha256:([0-9a-f]{64})(?: |$)/.exec(header[2] ?? '');
      if (sum !== null) declaredDigest = sum[1];
      const shown = /(?:^| )readable=sha256:([0-9a-f]{64})(?: |$)/.exec(header[2] ?? '');
      if (shown !== null) declaredReadable = shown[1];
      const firstNumber = /(?:^| )first=(\d+)(?: |$)/.exec(header[2] ?? '');
      if (firstNumber !== null) declaredFirst = Number(firstNumber[1]);
      return true;
    }
    const segment = SEGMENT.exec(line);
    if (segment === null) return false;
    let name: string;
    try {
      name = decodeURIComponent(segment[3]!);
    } catch {
      return false;
    }
    if (name.includes('/') || name.includes('\\') || name === '..' || name === '.') return false;
    segments.push({ file: name, messages: Number(segment[1]), sha256: segment[2]!, line: lines.at(offset) });
    return true;
  }
}

interface MarkerPayload {
  offset: number;
  payload: string;
}

/**
 * The digest covers every marker's JSON followed by a comma. Those same bytes, after a `[` and
 * with the last comma turned into `]`, are a JSON array: decoding all payloads into one buffer
 * and parsing it once is much cheaper than one JSON.parse per message. Any irregularity (bad
 * base64, bad UTF-8, bad JSON, a payload that is not exactly one message) falls back to reading
 * the markers one by one, each failure listed with its line.
 */
function decodeMarkers(
  markers: readonly MarkerPayload[],
  file: string,
  lines: { at(offset: number): number },
  messages: Message[],
  problems: SessionProblem[],
  digest: Digest,
): void {
  // In groups of about GROUP_CHARS of base64, so each group's JSON text is a young-heap object.
  let start = 0;
  while (start < markers.length) {
    let end = start;
    for (let chars = 0; end < markers.length && (chars < GROUP_CHARS || end === start); end += 1)
      chars += markers[end]!.payload.length;
    decodeGroup(
      start === 0 && end === markers.length ? markers : markers.slice(start, end),
      file,
      lines,
      messages,
      problems,
      digest,
    );
    start = end;
  }
}

/**
 * Base64 characters decoded and parsed at a time (at least one marker): their JSON, about 32 KiB,
 * is decoded into a string under V8's 128 KB limit for young-heap objects. Larger groups make
 * large-object-space strings, which cost more to make and to collect.
 */
const GROUP_CHARS = 43 * 1024;

function decodeGroup(
  markers: readonly MarkerPayload[],
  file: string,
  lines: { at(offset: number): number },
  messages: Message[],
  problems: SessionProblem[],
  digest: Digest,
): void {
  if (markers.length === 0) return;
  let bound = 2;
  for (const marker of markers) bound += (marker.payload.length >>> 2) * 3 + 1;
  const all = Buffer.allocUnsafe(bound);
  all[0] = 0x5b; // [
  let position = 1;
  let whole = true;
  for (const marker of markers) {
    const expected = decodedLength(marker.payload);
    if (expected === -1 || all.write(marker.payload, position, 'base64') !== expected) {
      whole = false;
      break;
    }
    position += expected;
    all[position] = 0x2c; // ,
    position += 1;
  }
  if (whole) {
    digest.update(all.subarray(1, position));
    all[position - 1] = 0x5d; // ]
    const json = decodeUtf8(all.subarray(0, position));
    if (json !== undefined) {
      let values: unknown;
      try {
        values = JSON.parse(json);
      } catch {
        values = undefined;
      }
      if (Array.isArray(values) && values.length === markers.length && values.every(isMessage)) {
        for (const value of values as Message[]) messages.push(value);
        return;
      }
    }
  }
  for (const marker of markers) {
    const bytes = Buffer.from(marker.payload, 'base64');
    if (decodedLength(marker.payload) !== bytes.length) {
      if (!whole) digest.update(marker.payload).update(',');
      problems.push({
        file,
        line: lines.at(marker.offset),
        why: 'nf-msg marker payload is not valid base64: the message was not recovered',
      });
      continue;
    }
    if (!whole) digest.update(bytes).update(',');
    if (!isUtf8(bytes)) {
      problems.push({
        file,
        line: lines.at(marker.offset),
        why: 'nf-msg marker payload is not UTF-8: the message was not recovered',
      });
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch (error) {
      problems.push({
        file,
        line: lines.at(marker.offset),
        why: `nf-msg marker payload is not JSON (${(error as Error).message}): the message was not recovered`,
      });
      continue;
    }
    if (!isMessage(value)) {
      problems.push({
        file,
        line: lines.at(marker.offset),
        why: 'nf-msg marker does not hold a message (an object with a string role)',
      });
      continue;
    }
    messages.push(value);
  }
}

/**
 * Bytes a canonical base64 payload decodes to, or -1 if its length cannot be base64. Node's
 * decoder skips characters that are not base64, so a payload with any decodes to fewer bytes.
 */
function decodedLength(payload: string): number {
  const length = payload.length;
  if (length % 4 !== 0) return -1;
  const padding = payload.charCodeAt(length - 1) !== 0x3d ? 0 : payload.charCodeAt(length - 2) === 0x3d ? 2 : 1;
  return (length / 4) * 3 - padding;
}

/** Line numbers from offsets, counted only when a problem needs one (in increasing order, mostly). */
function createLineCounter(text: string): { at(offset: number): number } {
  let offset = 0;
  let line = 1;
  return {
    at(target: number): number {
      if (target < offset) {
        offset = 0;
        line = 1;
      }
      for (
        let index = text.indexOf('\n', offset);
        index !== -1 && index < target;
        index = text.indexOf('\n', index + 1)
      )
        line += 1;
      // Continue from the start of the target's line next time.
      offset = target;
      return line;
    },
  };
}

function preview(line: string): string {
  return line.length > 60 ? `${line.slice(0, 60)}…` : line;
}
