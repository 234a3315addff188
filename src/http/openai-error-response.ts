/**
 * An error the proxy itself answers with, in the shape OpenAI-compatible clients parse
 * (`{ error: { message, type, param, code } }`), so SDKs surface the message instead of a parse failure.
 */
export function openAIErrorResponse(status: number, message: string, code: string, headers: Record<string, string> = {}): Response {
  const body = { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code } };
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}
