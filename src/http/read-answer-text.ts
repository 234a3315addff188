/** An answer read whole as text, or, when it is larger than allowed, the same answer still to be read. */
export type AnswerText = { text: string } | { response: Response };

/**
 * Reads an answer's body as text for a decision that only small answers need (the heal after a
 * 400), holding at most `limit` bytes: past it, the answer comes back as a `Response` that replays
 * what was read and then streams the rest, so a huge error body is relayed as it comes instead of
 * filling memory. The body is read as fetch hands it over (decoded), so the limit is on what a
 * compressed body inflates to.
 */
export async function readAnswerText(response: Response, limit: number): Promise<AnswerText> {
  if (response.body === null) return { text: '' };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size > limit) return { response: replay(response, chunks, reader) };
  }
  const decoder = new TextDecoder();
  let text = '';
  for (const chunk of chunks) text += decoder.decode(chunk, { stream: true });
  return { text: text + decoder.decode() };
}

function replay(response: Response, read: Uint8Array[], reader: ReadableStreamDefaultReader<Uint8Array>): Response {
  let index = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const held = read[index];
        if (held !== undefined) {
          read[index] = new Uint8Array(0); // given away: not held twice
          index += 1;
          controller.enqueue(held);
          return;
        }
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      async cancel(reason) {
        await reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
