/**
 * True for an OpenAI-compatible chat-completions endpoint, whatever the base path:
 * `/v1/chat/completions`, `/chat/completions`, `/compatible-mode/v1/chat/completions`, `/api/v3/chat/completions`...
 */
export function isChatCompletionsPath(url: string): boolean {
  let pathname: string;
  try {
    pathname = url.startsWith('/') ? new URL(url, 'http://localhost').pathname : new URL(url).pathname;
  } catch {
    return false;
  }
  return /\/chat\/completions\/?$/.test(pathname);
}
