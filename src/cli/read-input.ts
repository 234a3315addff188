import { Buffer, isUtf8 } from 'node:buffer';
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { isUnstuckError, UnstuckError } from '../core/errors.js';
import type { Io } from './io.js';
import { lineAndColumn } from './json-error-offset.js';

/**
 * The largest input the CLI reads, in bytes: 256 MiB, or `UNSTUCK_MAX_INPUT_BYTES`. A history is
 * parsed whole, and V8 cannot hold a string of much more than 512 M characters at all (a 600 MB
 * file failed with "Invalid string length"); a JSON.parse of 256 MB already needs gigabytes.
 */
export const DEFAULT_MAX_INPUT_BYTES = 256 * 1024 * 1024;

export function maxInputBytes(io: Io): number {
  const configured = Number(io.env['UNSTUCK_MAX_INPUT_BYTES']);
  return Number.isSafeInteger(configured) && configured > 0 ? configured : DEFAULT_MAX_INPUT_BYTES;
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * FILE's bytes (stdin for `-`). Only a regular file is read: a FIFO, socket or device could block
 * forever or never end, so it is refused (opened with O_NONBLOCK, so even opening a FIFO with no
 * writer returns at once, then judged by fstat). Larger than the limit: refused before reading.
 */
export async function readInputBytes(file: string, io: Io): Promise<Buffer> {
  const limit = maxInputBytes(io);
  if (file === '-') return readStdin(io, limit);
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw readError(file, error);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile())
      throw new UnstuckError('IO', `cannot read: not a regular file (${kindOf(info)}); name a file, or - for stdin`, {
        file,
      });
    if (info.size > limit) throw tooLarge(file, info.size, limit);
    const bytes = await handle.readFile();
    if (bytes.length > limit) throw tooLarge(file, bytes.length, limit);
    return bytes;
  } catch (error) {
    throw readError(file, error);
  } finally {
    await handle.close();
  }
}

/**
 * Text of UTF-8 input for JSON and JSONL. A UTF-8 byte order mark is accepted (Windows editors
 * write one) and reported, so a rewrite can keep it. Bytes that are not UTF-8 are refused with
 * their line and column: decoding would turn them into U+FFFD, and a rewrite would lose them.
 */
export function decodeInput(bytes: Buffer, file: string): { text: string; bom: boolean } {
  const bom = bytes.length >= 3 && bytes.subarray(0, 3).equals(BOM);
  const body = bom ? bytes.subarray(3) : bytes;
  if (!isUtf8(body)) {
    const at = firstInvalidUtf8(body);
    const prefix = body.subarray(0, at).toString('utf8');
    throw new UnstuckError(
      'INPUT_INVALID',
      `not UTF-8: byte 0x${body[at]!.toString(16).padStart(2, '0')} here is not part of a UTF-8 character (read as text it would become U+FFFD and be lost: save the file as UTF-8)`,
      { file, position: lineAndColumn(prefix, prefix.length) },
    );
  }
  return { text: body.toString('utf8'), bom };
}

/** Offset of the first byte that does not belong to a valid UTF-8 sequence (only called on invalid input). */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let at = 0;
  while (at < bytes.length) {
    const lead = bytes[at]!;
    if (lead < 0x80) {
      at += 1;
      continue;
    }
    const length =
      lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    if (length === 0 || at + length > bytes.length || !isUtf8(bytes.subarray(at, at + length))) return at;
    at += length;
  }
  return at;
}

function tooLarge(file: string, size: number, limit: number): UnstuckError {
  return new UnstuckError(
    'INPUT_INVALID',
    `too large: ${size} bytes, more than the limit of ${limit} bytes (${Math.round(limit / 1024 / 1024)} MiB; set UNSTUCK_MAX_INPUT_BYTES to change it)`,
    { file },
  );
}

function kindOf(info: {
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isDirectory(): boolean;
}): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  return 'not a file';
}

function readError(file: string, error: unknown): unknown {
  if (isUnstuckError(error)) return error;
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === 'ENOENT'
      ? 'no such file'
      : code === 'EISDIR'
        ? 'is a directory'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'ENOTDIR'
            ? 'a part of the path is not a directory'
            : (error as Error).message;
  return new UnstuckError('IO', `cannot read: ${why}`, { file, cause: error });
}

async function readStdin(io: Io, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of io.stdin) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += bytes.length;
    if (size > limit) throw tooLarge('<stdin>', size, limit);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}
