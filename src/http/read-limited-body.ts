/** A request body read whole, or the news that it is larger than allowed. */
export type LimitedBody = { ok: true; bytes: Uint8Array } | { ok: false; size: number };

/**
 * Reads a body up to `limit` bytes. Stops reading (and cancels the stream) as soon as the limit
 * is passed, so a client cannot make the proxy hold more than `limit` bytes of one request.
 */
export async function readLimitedBody(body: ReadableStream<Uint8Array> | null, limit: number): Promise<LimitedBody> {
  if (body === null) return { ok: true, bytes: new Uint8Array(0) };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return { ok: false, size };
    }
    chunks.push(value);
  }
  if (chunks.length === 1 && chunks[0] !== undefined) return { ok: true, bytes: chunks[0] };
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, bytes };
}
