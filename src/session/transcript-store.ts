import { Buffer } from 'node:buffer';
import { createHash, webcrypto } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open, readdir, readFile, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Message } from '../core/messages.js';
import { removeLeftoverTemporaries, syncDirectory, writeFileAtomic } from './atomic-write.js';
import type { Snapshot } from './json-snapshot.js';
import { matchesSnapshot, takeSnapshot } from './json-snapshot.js';
import { asSaveError } from './save-error.js';
import { createSerial } from './serial.js';
import type { ParsedTranscript } from './transcript-reader.js';
import { countProblems, declaredSegmentNames, parseTranscriptBytes } from './transcript-reader.js';
import type { SegmentRef } from './transcript-syntax.js';
import { formatTranscriptBytes } from './transcript-writer.js';
import type { LoadResult, SessionProblem, SessionStore, TranscriptStoreOptions } from './types.js';
import type { WriterLock } from './writer-lock.js';
import { acquireWriterLock } from './writer-lock.js';

const DEFAULT_SEGMENT_MESSAGES = 1000;
/** Segment writes in flight at once during a save (see createWriteWindow). */
const SEGMENT_WRITES = 4;

/** A full block of messages as this store last saved it: its segment file and what its JSON was. */
interface SavedBlock {
  file: string;
  sha256: string;
  snapshot: Snapshot;
}

/**
 * A session kept as a Markdown transcript (see transcript-codec.ts). A long session is split:
 * every full block of `segmentMessages` goes to a segment file named after its digest
 * (`NAME.seg-<sha256:16>.md`), and the main file declares them (name, count, sha256) above the
 * last block, which it holds itself. A save writes the segments first, then switches to them by
 * one rename of the main file, then removes segment files the new main file does not declare. A
 * load reads exactly the segments the main file declares: files of older saves are never read
 * (NexForgeCLI read numbered segments until one was missing, so an older, longer save came back).
 *
 * A save after a step costs what changed: a block whose JSON is what this store saved last time
 * (checked against a snapshot, so a message changed in place is seen) is not formatted again,
 * and its file is not read or written again while it is the file this store left (see
 * ensureSegment). Files the store did not write itself are read and hashed before they are kept;
 * a load does that already, so the first save after a load is as cheap as the next ones.
 */
export function createTranscriptStore(path: string, options: TranscriptStoreOptions = {}): SessionStore {
  const segmentMessages = Math.max(1, Math.floor(options.segmentMessages ?? DEFAULT_SEGMENT_MESSAGES));
  const directory = dirname(path);
  const stem = basename(path).replace(/\.md$/i, '');
  const segmentName = new RegExp(`^${escapeRegExp(stem)}\\.seg-[0-9a-f]{16}\\.md$`);
  const serial = createSerial();
  let lock: WriterLock | undefined;
  /** Block i of the last save (messages i*segmentMessages onwards); undefined if it was not plain data. */
  const blocks: (SavedBlock | undefined)[] = [];
  /** Segment files this store wrote or read whole, and their identity then (see ensureSegment). */
  const onDisk = new Map<string, BigIntStats>();

  async function ensureLock(): Promise<void> {
    if (lock === undefined)
      lock =
        options.lock ??
        (await acquireWriterLock(
          path,
          options.lockTimeoutMs === undefined ? {} : { timeoutMs: options.lockTimeoutMs },
        ));
  }

  async function save(messages: readonly Message[]): Promise<void> {
    await ensureLock();
    // Segment files get the main file's permissions: a private session stays private whole.
    const mode = await stat(path).then(
      (info) => info.mode & 0o7777,
      () => undefined,
    );
    const fullSegments = messages.length > segmentMessages ? Math.floor((messages.length - 1) / segmentMessages) : 0;
    const segments: Omit<SegmentRef, 'line'>[] = [];
    const writes = createWriteWindow(SEGMENT_WRITES);
    let wroteSegment = false;
    const write = (file: string, sha256: string, data: Buffer[] | (() => Buffer[])) =>
      writes.add(async () => {
        if (await ensureSegment(file, sha256, data, mode)) wroteSegment = true;
      });
    try {
      for (let index = 0; index < fullSegments; index += 1) {
        const first = index * segmentMessages;
        const chunk = messages.slice(first, first + segmentMessages);
        const saved = blocks[index];
        // The same JSON as this block had last time (the same objects, or changed in place and
        // back): its file name and digest are known without formatting it again.
        if (saved !== undefined && matchesSnapshot(chunk, saved.snapshot)) {
          segments.push({ file: saved.file, messages: chunk.length, sha256: saved.sha256 });
          await write(saved.file, saved.sha256, () => formatSegment(chunk, first));
          continue;
        }
        const bytes = formatSegment(chunk, first);
        const hash = createHash('sha256');
        for (const part of bytes) hash.update(part);
        const sha256 = hash.digest('hex');
        const file = `${stem}.seg-${sha256.slice(0, 16)}.md`;
        const snapshot = takeSnapshot(chunk);
        blocks[index] = snapshot === undefined ? undefined : { file, sha256, snapshot };
        segments.push({ file, messages: chunk.length, sha256 });
        await write(file, sha256, bytes);
      }
    } finally {
      // Every segment write has ended before the save goes on or fails: none outlives it.
      await writes.finish();
    }
    blocks.length = fullSegments;
    if (wroteSegment) await syncDirectory(directory);
    const tail = messages.slice(fullSegments * segmentMessages);
    await writeFileAtomic(
      path,
      formatTranscriptBytes(tail, {
        first: fullSegments * segmentMessages + 1,
        total: messages.length,
        segments,
        readableDigest: true,
      }),
    );
    // The switch is done; whatever the new main file does not declare belongs to older saves.
    // Removing it is housekeeping: a failure here does not undo a save that has succeeded.
    const keep = new Set(segments.map((segment) => segment.file));
    for (const file of onDisk.keys()) if (!keep.has(file)) onDisk.delete(file);
    const names = await readdir(directory).catch(() => [] as string[]);
    const stale = names.filter((name) => segmentName.test(name) && !keep.has(name));
    // `fix --write` keeps the session it replaced as FILE.bak: the segment files that one declares
    // are its messages, so they stay until FILE.bak is gone or declares others.
    if (stale.length > 0) for (const name of await segmentsOfBackup(`${path}.bak`)) keep.add(name);
    for (const name of stale) {
      if (!keep.has(name)) await rm(join(directory, name), { force: true }).catch(() => undefined);
    }
    await removeLeftoverTemporaries(path, names).catch(() => undefined);
  }

  function formatSegment(chunk: readonly Message[], first: number): Buffer[] {
    // No readable digest: the main file declares the whole segment file's sha256 already.
    return formatTranscriptBytes(chunk, { first: first + 1, total: chunk.length, segments: [] });
  }

  /**
   * Makes sure segment `file` on disk holds the bytes whose digest is `sha256`; true if it had to
   * write it. A file this store wrote or read whole before is trusted while its identity (device,
   * inode, size, modification and change times, in nanoseconds) is what it was then: replacing it
   * gives another inode, writing into it moves its times, and its change time cannot be set back.
   * Any other file is read and hashed first, as one written by another process or an older save.
   */
  async function ensureSegment(
    file: string,
    sha256: string,
    data: Buffer[] | (() => Buffer[]),
    mode: number | undefined,
  ): Promise<boolean> {
    const target = join(directory, file);
    const known = onDisk.get(file);
    if (known !== undefined) {
      if (sameIdentity(known, await stat(target, { bigint: true }).catch(() => undefined))) return false;
      onDisk.delete(file);
    }
    const found = await readIdentified(target).catch(() => undefined);
    if (found !== undefined && createHash('sha256').update(found.bytes).digest('hex') === sha256) {
      onDisk.set(file, found.identity);
      return false;
    }
    await writeFileAtomic(
      target,
      typeof data === 'function' ? data() : data,
      mode === undefined ? { syncDirectory: false } : { syncDirectory: false, mode },
    );
    onDisk.set(file, await stat(target, { bigint: true }));
    return true;
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
      const parsed = await parseMainFile(text, path);
      const result = await loadSegments(parsed, text, attempt < 3);
      if (result !== undefined) return result;
    }
  }

  async function loadSegments(
    parsed: ParsedTranscript,
    mainText: Buffer,
    mayRetry: boolean,
  ): Promise<LoadResult | undefined> {
    if (parsed.segments.length === 0) {
      return {
        messages: parsed.messages,
        problems: [...parsed.problems, ...countProblems(path, parsed.declared, parsed.messages.length)],
      };
    }
    const messages: Message[] = [];
    const problems: SessionProblem[] = [];
    /** While every segment so far is a full block, segment i is block i of the next save. */
    let aligned = true;
    /** One buffer for every segment's bytes: a new one per file pays for its pages' first touch (about 1 of 4.5 ms reading the 4 files of a 3,785-message session). */
    let scratch: Buffer | undefined;
    for (const [index, segment] of parsed.segments.entries()) {
      const file = join(directory, segment.file);
      aligned &&= segment.messages === segmentMessages;
      let bytes: Buffer;
      let identity: BigIntStats;
      try {
        let buffer: Buffer;
        ({ bytes, identity, buffer } = await readIdentified(file, scratch));
        scratch = buffer;
      } catch (error) {
        if (mayRetry && !(await readFile(path).catch(() => mainText)).equals(mainText)) return undefined;
        problems.push({
          file: path,
          line: segment.line,
          why: `segment file ${segment.file} (${segment.messages} messages) cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): its messages were not recovered`,
        });
        continue;
      }
      // The file's digest is computed on the thread pool while this thread parses, trusting it to
      // match; if it does not, the segment is parsed again with every check.
      const hashing = webcrypto.subtle.digest('SHA-256', bytes);
      let part = parseTranscriptBytes(bytes, file, { verified: true });
      const sha256 = Buffer.from(await hashing).toString('hex');
      if (sha256 !== segment.sha256) {
        problems.push({
          file,
          why: `digest does not match the one the main file declares (the file was changed or damaged); reading what is intact`,
        });
        part = parseTranscriptBytes(bytes, file, { changed: true });
      }
      problems.push(...part.problems);
      if (part.messages.length !== segment.messages) {
        problems.push({
          file,
          why: `the main file declares ${segment.messages} messages in this segment but ${part.messages.length} were read`,
        });
      }
      // Read whole and intact: the next save can keep this file without formatting or reading it again.
      if (
        aligned &&
        sha256 === segment.sha256 &&
        part.problems.length === 0 &&
        part.messages.length === segment.messages
      )
        remember(index, segment, identity, part.messages);
      for (const message of part.messages) messages.push(message);
    }
    for (const message of parsed.messages) messages.push(message);
    problems.push(...parsed.problems);
    const missing = countProblems(path, parsed.declared, messages.length);
    problems.push(...missing);
    return { messages, problems };
  }

  /** Block `index` as a load found it, for the next save (only for files named as this store names them). */
  function remember(index: number, segment: SegmentRef, identity: BigIntStats, messages: readonly Message[]): void {
    if (segment.file !== `${stem}.seg-${segment.sha256.slice(0, 16)}.md`) return;
    onDisk.set(segment.file, identity);
    const snapshot = takeSnapshot(messages);
    blocks[index] = snapshot === undefined ? undefined : { file: segment.file, sha256: segment.sha256, snapshot };
  }

  return {
    load: () => serial(load),
    save: (messages) =>
      serial(() => save(messages).catch((error: unknown) => Promise.reject(asSaveError(path, error)))),
    close: () =>
      serial(async () => {
        const held = lock;
        lock = undefined;
        blocks.length = 0;
        onDisk.clear();
        if (held !== options.lock) await held?.release();
      }),
  };
}

/**
 * A segment's bytes with the identity they were read under (taken first: a change while reading
 * moves it), read into `scratch` when it is large enough; `buffer` is what holds them, for reuse.
 */
async function readIdentified(
  file: string,
  scratch?: Buffer,
): Promise<{ bytes: Buffer; identity: BigIntStats; buffer: Buffer }> {
  const handle = await open(file, 'r');
  try {
    const identity = await handle.stat({ bigint: true });
    const size = Number(identity.size);
    let buffer = scratch !== undefined && scratch.length > size ? scratch : Buffer.allocUnsafeSlow(size + 1);
    let filled = 0;
    for (;;) {
      if (filled === buffer.length) {
        const larger = Buffer.allocUnsafeSlow(buffer.length * 2);
        buffer.copy(larger, 0, 0, filled);
        buffer = larger;
      }
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return { bytes: buffer.subarray(0, filled), identity, buffer };
  } finally {
    await handle.close();
  }
}

const READABLE = /(?:^| )readable=sha256:([0-9a-f]{64})(?: |$)/;

/**
 * The main file, parsed as segments are: its readable digest (which covers everything after the
 * header line) is computed on the thread pool while this thread parses, trusting it to match; if
 * it does not, or the file declares none, it is parsed again with every check.
 */
async function parseMainFile(bytes: Buffer, path: string): Promise<ParsedTranscript> {
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const headerEnd = bytes.indexOf(0x0a, start);
  const declared =
    headerEnd === -1
      ? undefined
      : READABLE.exec(bytes.toString('latin1', start, headerEnd).replace(/ -->\s*$/, ''))?.[1];
  if (declared === undefined) return parseTranscriptBytes(bytes, path);
  const hashing = webcrypto.subtle.digest('SHA-256', bytes.subarray(headerEnd + 1));
  const parsed = parseTranscriptBytes(bytes, path, { verified: true });
  return Buffer.from(await hashing).toString('hex') === declared ? parsed : parseTranscriptBytes(bytes, path);
}

/** Bytes of a backup's head read to find its segment declarations: room for thousands of them. */
const BACKUP_HEAD_BYTES = 1024 * 1024;

async function segmentsOfBackup(file: string): Promise<string[]> {
  let handle: FileHandle | undefined;
  try {
    // O_NONBLOCK: whatever sits at FILE.bak (a FIFO a repository shipped) must not block a save.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return [];
  }
  try {
    if (!(await handle.stat()).isFile()) return [];
    const head = Buffer.allocUnsafe(BACKUP_HEAD_BYTES);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return declaredSegmentNames(head.subarray(0, bytesRead).toString('latin1'));
  } catch {
    return [];
  } finally {
    await handle.close();
  }
}

function sameIdentity(known: BigIntStats, now: BigIntStats | undefined): boolean {
  return (
    now?.isFile() === true &&
    now.dev === known.dev &&
    now.ino === known.ino &&
    now.size === known.size &&
    now.mtimeNs === known.mtimeNs &&
    now.ctimeNs === known.ctimeNs
  );
}

/**
 * Runs up to `size` segment writes at once, so formatting the next segment overlaps the fsync of
 * the last ones, while at most `size` formatted segments are held in memory. `finish` waits for
 * all of them and rethrows the first failure (only once none is still running).
 */
function createWriteWindow(size: number): { add(write: () => Promise<void>): Promise<void>; finish(): Promise<void> } {
  const running = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  async function finish(): Promise<void> {
    await Promise.allSettled(running);
    if (failure !== undefined) throw failure.error;
  }
  return {
    async add(write) {
      if (failure !== undefined) return finish();
      const promise: Promise<void> = write()
        .catch((error: unknown) => {
          failure ??= { error };
        })
        .finally(() => running.delete(promise));
      running.add(promise);
      if (running.size >= size) await Promise.race(running);
    },
    finish,
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
