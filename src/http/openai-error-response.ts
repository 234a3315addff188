/** An answer the proxy gives itself, as plain data both the handler and the native server can send. */
export interface LocalAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * An error the proxy itself answers with, in the shape OpenAI-compatible clients parse
 * (`{ error: { message, type, param, code } }`), so SDKs surface the message instead of a parse failure.
 */
export function openAIError(
  status: number,
  message: string,
  code: string,
  headers: Record<string, string> = {},
): LocalAnswer {
  const body = {
    error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code },
  };
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

export function openAIErrorResponse(
  status: number,
  message: string,
  code: string,
  headers: Record<string, string> = {},
): Response {
  return toResponse(openAIError(status, message, code, headers));
}

export function toResponse(answer: LocalAnswer): Response {
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}
