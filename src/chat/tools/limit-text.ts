/** The most characters a tool hands back to the model; larger output is cut with a note saying so. */
export const TOOL_OUTPUT_LIMIT = 32_000;

/**
 * `text` cut to `limit` characters, keeping the head and the tail (the end of a command's output
 * is usually where the error is) and saying how much was left out.
 */
export function limitText(text: string, limit: number = TOOL_OUTPUT_LIMIT): string {
  if (text.length <= limit) return text;
  const head = Math.floor(limit * 0.6);
  const tail = limit - head;
  const omitted = text.length - head - tail;
  return `${text.slice(0, head)}\n[... ${omitted} characters left out ...]\n${text.slice(text.length - tail)}`;
}
