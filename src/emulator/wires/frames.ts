/** A JSON response with the given status. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

/** One SSE event with only a `data:` line (OpenAI chat). */
export function dataFrame(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

/** One SSE event with an `event:` line naming it and its `data:` (Anthropic: the name is the payload's `type`). */
export function namedFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
