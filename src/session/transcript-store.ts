import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Message } from '../core/messages.js';
import { removeLeftoverTemporaries, syncDirectory, writeFileAtomic } from './atomic-write.js';
import { asSaveError } from './save-error.js';
import { createSerial } from './serial.js';
import type { ParsedTranscript } from './transcript-reader.js';
import { countProblems, parseTranscriptBytes } from './transcript-reader.js';
import type { SegmentRef } from './transcript-syntax.js';
import { formatTranscriptText } from './transcript-writer.js';
import type { LoadResult, SessionProblem, SessionStore, TranscriptStoreOptions } from './types.js';
import type { WriterLock } from './writer-lock.js';
import { acquireWriterLock } from './writer-lock.js';

const DEFAULT_SEGMENT_MESSAGES = 1000;

/**
 * A session kept as a Markdown transcript (see transcript-codec.ts). A long session is split:
 * every full block of `segmentMessages` goes to a segment file named after its digest
 * (`NAME.seg-<sha256:16>.md`), and the main file declares them (name, count, sha256) above the
 * last block, which it holds itself. A save writes the segments first, then switches to them by
 * one rename of the main file, then removes segment files the new main file does not declare. A
 * load reads exactly the segments the main file declares: files of older saves are never read
 * (NexForgeCLI read numbered segments until one was missing, so an older, longer save came back).
 */
export function createTranscriptStore(path: string, options: TranscriptStoreOptions = {}): SessionStore {
  const segmentMessages = Math.max(1, Math.floor(options.segmentMessages ?? DEFAULT_SEGMENT_MESSAGES));
  const directory = dirname(path);
  const stem = basename(path).replace(/\.md$/i, '');
  const segmentName = new RegExp(`^${escapeRegExp(stem)}\\.seg-[0-9a-f]{16}\\.md$`);
  const serial = createSerial();
  let lock: WriterLock | undefined;

  async function ensureLock(): Promise<void> {
    if (lock === undefined) lock = await acquireWriterLock(path, options.lockTimeoutMs === undefined ? {} : { timeoutMs: options.lockTimeoutMs });
  }

  async function save(messages: readonly Message[]): Promise<void> {
    await ensureLock();
    const fullSegments = messages.length > segmentMessages ? Math.floor((messages.length - 1) / segmentMessages) : 0;
    const segments: Omit<SegmentRef, 'line'>[] = [];
    let wroteSegment = false;
    for (let index = 0; index < fullSegments; index += 1) {
      const chunk = messages.slice(index * segmentMessages, (index + 1) * segmentMessages);
      const bytes = Buffer.from(formatTranscriptText(chunk, { first: index * segmentMessages + 1, total: chunk.length, segments: [] }), 'utf8');
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      const file = `${stem}.seg-${sha256.slice(0, 16)}.md`;
      segments.push({ file, messages: chunk.length, sha256 });
      // Named by digest: an unchanged block from the last save is already there, whole.
      if (await hasDigest(join(directory, file), sha256)) continue;
      await writeFileAtomic(join(directory, file), bytes, { syncDirectory: false });
      wroteSegment = true;
    }
    if (wroteSegment) await syncDirectory(directory);
    const tail = messages.slice(fullSegments * segmentMessages);
    const text = formatTranscriptText(tail, { first: fullSegments * segmentMessages + 1, total: messages.length, segments });
    // Node's own encoder, not utf8.ts: ICU's needs a UTF-16 copy of the text first, which costs more
    // peak memory (x1 save: 24 MB instead of 19 MB) than the 4 ms it saves next to the fsyncs.
    await writeFileAtomic(path, Buffer.from(text, 'utf8'));
    // The switch is done; whatever the new main file does not declare belongs to older saves.
    // Removing it is housekeeping: a failure here does not undo a save that has succeeded.
    const keep = new Set(segments.map((segment) => segment.file));
    const names = await readdir(directory).catch(() => [] as string[]);
    for (const name of names) {
      if (segmentName.test(name) && !keep.has(name)) await rm(join(directory, name), { force: true }).catch(() => undefined);
    }
    await removeLeftoverTemporaries(path, names).catch(() => undefined);
  }

  async function load(): Promise<LoadResult> {
    // A writer may switch saves while we read: if a declared segment vanished because the main
    // file changed, read again from the new main file.
    for (let attempt = 0; ; attempt += 1) {
      let text: Buffer;
      try {
        text = await readFile(path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { messages: [], problems: [] };
        return { messages: [], problems: [{ file: path, why: `cannot read the file: ${(error as Error).message}` }] };
      }
      const parsed = parseTranscriptBytes(text, path);
      const result = await loadSegments(parsed, text, attempt < 3);
      if (result !== undefined) return result;
    }
  }

  async function loadSegments(parsed: ParsedTranscript, mainText: Buffer, mayRetry: boolean): Promise<LoadResult | undefined> {
    if (parsed.segments.length === 0) {
      return { messages: parsed.messages, problems: [...parsed.problems, ...countProblems(path, parsed.declared, parsed.messages.length)] };
    }
    const messages: Message[] = [];
    const problems: SessionProblem[] = [];
    for (const segment of parsed.segments) {
      const file = join(directory, segment.file);
      let bytes: Buffer;
      try {
        bytes = await readFile(file);
      } catch (error) {
        if (mayRetry && !(await readFile(path).catch(() => mainText)).equals(mainText)) return undefined;
        problems.push({ file: path, line: segment.line, why: `segment file ${segment.file} (${segment.messages} messages) cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): its messages were not recovered` });
        continue;
      }
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      if (sha256 !== segment.sha256) {
        problems.push({ file, why: `digest does not match the one the main file declares (the file was changed or damaged); reading what is intact` });
      }
      const part = parseTranscriptBytes(bytes, file);
      problems.push(...part.problems);
      if (part.messages.length !== segment.messages) {
        problems.push({ file, why: `the main file declares ${segment.messages} messages in this segment but ${part.messages.length} were read` });
      }
      for (const message of part.messages) messages.push(message);
    }
    for (const message of parsed.messages) messages.push(message);
    problems.push(...parsed.problems);
    const missing = countProblems(path, parsed.declared, messages.length);
    problems.push(...missing);
    return { messages, problems };
  }

  return {
    load: () => serial(load),
    save: (messages) => serial(() => save(messages).catch((error: unknown) => Promise.reject(asSaveError(path, error)))),
    close: () => serial(async () => {
      const held = lock;
      lock = undefined;
      await held?.release();
    }),
  };
}

async function hasDigest(file: string, sha256: string): Promise<boolean> {
  try {
    return createHash('sha256').update(await readFile(file)).digest('hex') === sha256;
  } catch {
    return false;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
