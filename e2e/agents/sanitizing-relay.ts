/**
 * A loopback relay whose every request goes to the emulator through the sanitizing fetch: what an
 * SDK with `fetch: createSanitizingFetch()` does, for a binary that only takes a base URL.
 * Hop-by-hop and length headers are dropped both ways (RFC 9110 §7.6.1); bodies stream back as they come.
 */
export function relayThrough(sanitizing: typeof fetch, upstream: string): (request: Request) => Promise<Response> {
  const dropped = [
    'host',
    'connection',
    'keep-alive',
    'transfer-encoding',
    'content-length',
    'accept-encoding',
    'content-encoding',
  ];
  return async (request) => {
    const target = new URL(request.url);
    const headers = new Headers(request.headers);
    for (const name of dropped) headers.delete(name);
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.text();
    const response = await sanitizing(new URL(target.pathname + target.search, upstream).href, {
      method: request.method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const back = new Headers(response.headers);
    for (const name of dropped) back.delete(name);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers: back });
  };
}
