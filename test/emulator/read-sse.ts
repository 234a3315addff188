import { createParser } from 'eventsource-parser';

/** Reads an SSE body into its `data:` payloads (test helper; the agent has its own reader). */
export async function readSse(response: Response): Promise<{ events: string[]; error?: unknown }> {
  const events: string[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event.data) });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
      parser.feed(decoder.decode(chunk, { stream: true }));
  } catch (error) {
    return { events, error };
  }
  return { events };
}
