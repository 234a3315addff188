/** Fetch's arguments, as a caller passed them or as they are sent again with a new body. */
export type FetchArguments = [input: string | URL | Request, init?: RequestInit];

/** A POST inside fetch arguments whose body one of the sanitizing paths understands. */
export interface FetchRequest<B> {
  url: string;
  body: B;
  /** The arguments to send: the original ones when `text` is undefined, else the same request with this body. */
  build(text: string | undefined): FetchArguments;
}

/**
 * The POST inside fetch arguments, its body parsed by what `select` returns for its URL; undefined
 * when it is not a POST, `select` does not take the URL, or the body is not one `parse` reads (a
 * stream, form data, or not the shape): the caller then sends the arguments as they came.
 */
export async function readFetchRequest<B>(
  input: string | URL | Request,
  init: RequestInit | undefined,
  select: (url: string) => ((text: string) => B | undefined) | undefined,
): Promise<FetchRequest<B> | undefined> {
  const isRequest =
    typeof input === 'object' &&
    'url' in input &&
    typeof (input as Request).clone === 'function' &&
    !(input instanceof URL);
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : (input as Request).url;
  const method = (init?.method ?? (isRequest ? (input as Request).method : 'GET')).toUpperCase();
  if (method !== 'POST') return undefined;
  const parse = select(url);
  if (parse === undefined) return undefined;

  if (init?.body !== undefined && init.body !== null) {
    const text = await bodyText(init.body);
    const body = text === undefined ? undefined : parse(text);
    if (body === undefined) return undefined;
    return {
      url,
      body,
      build: (replacement) =>
        replacement === undefined
          ? [input, init]
          : [input, { ...init, body: replacement, headers: withoutContentLength(init.headers) }],
    };
  }
  if (!isRequest) return undefined;
  const request = new Request(input as Request, init);
  const body = parse(await request.clone().text());
  if (body === undefined) return undefined;
  return {
    url,
    body,
    build: (replacement) =>
      replacement === undefined
        ? [request.clone()]
        : [new Request(request, { body: replacement, headers: withoutContentLength(request.headers) })],
  };
}

/** The provider's answer again, from the text it was read into (decoded, so its length and encoding headers go). */
export function answerFromText(response: Response, text: string): Response {
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  headers.delete('content-encoding');
  return new Response(text, { status: response.status, statusText: response.statusText, headers });
}

async function bodyText(body: NonNullable<RequestInit['body']>): Promise<string | undefined> {
  if (typeof body === 'string') return body;
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return new TextDecoder().decode(body);
  if (body instanceof Blob) return body.text();
  return undefined; // a stream, form data or search params: not a JSON body we can read without consuming it
}

function withoutContentLength(headers: RequestInit['headers'] | Headers | undefined): Headers {
  const result = new Headers(headers);
  result.delete('content-length');
  return result;
}
