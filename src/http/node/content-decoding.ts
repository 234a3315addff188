import type { Transform } from 'node:stream';
import {
  brotliDecompressSync,
  createBrotliDecompress,
  createGunzip,
  createInflate,
  gunzipSync,
  inflateSync,
} from 'node:zlib';

/*
 * Bodies an upstream compressed although the carriers asked for identity: the proxy drops
 * `content-encoding` (fetch decodes too), so what it relays must be decoded here.
 */

export type Encoding = 'gzip' | 'deflate' | 'br';

/** The compression of a body an upstream compressed although we asked for identity, or undefined. */
export function encodingOf(contentEncoding: string | undefined): Encoding | undefined {
  if (contentEncoding === undefined) return undefined;
  const encoding = contentEncoding.trim().toLowerCase();
  if (encoding === 'gzip' || encoding === 'x-gzip') return 'gzip';
  if (encoding === 'deflate' || encoding === 'br') return encoding;
  return undefined;
}

/** A decoder for a body an upstream compressed although we asked for identity, or undefined. */
export function decoderFor(contentEncoding: string | undefined): Transform | undefined {
  const encoding = encodingOf(contentEncoding);
  return encoding === undefined ? undefined : decoderOf(encoding);
}

export function decoderOf(encoding: Encoding): Transform {
  if (encoding === 'gzip') return createGunzip();
  if (encoding === 'deflate') return createInflate();
  return createBrotliDecompress();
}

/** A whole (small) body as text, decoded first when the upstream compressed it; a decoded body over `limit` throws ERR_BUFFER_TOO_LARGE. */
export function textOf(bytes: Buffer, encoding: Encoding | undefined, limit: number): string {
  const options = { maxOutputLength: limit };
  if (encoding === 'gzip') return gunzipSync(bytes, options).toString('utf8');
  if (encoding === 'deflate') return inflateSync(bytes, options).toString('utf8');
  if (encoding === 'br') return brotliDecompressSync(bytes, options).toString('utf8');
  return bytes.toString('utf8');
}
