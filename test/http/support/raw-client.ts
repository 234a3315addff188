import { request as httpRequest } from 'node:http';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as received (empty when `keep` is false). */
  body: Buffer;
  bytes: number;
  /** The connection ended before the body did: the client can tell the answer is incomplete. */
  cut: boolean;
}

/**
 * One request on its own connection, the answer read with node:http (which tells a cut body from a
 * complete one). `slowMs`: the client reads nothing for that long after the headers (a slow reader
 * whose socket fills). `keep: false` counts the body without holding it.
 */
export function rawRequest(
  url: string,
  options: { method?: string; body?: string; headers?: Record<string, string>; slowMs?: number; keep?: boolean } = {},
): Promise<RawAnswer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers['content-type'] ??= 'application/json';
    const request = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? 'GET',
        headers,
        agent: false,
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        let settled = false;
        const finish = (cut: boolean): void => {
          if (settled) return;
          settled = true;
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            body: Buffer.concat(chunks),
            bytes,
            cut,
          });
        };
        incoming.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (options.keep !== false) chunks.push(chunk);
        });
        incoming.once('end', () => finish(!incoming.complete));
        incoming.once('error', () => finish(true));
        incoming.once('close', () => finish(!incoming.complete));
        if (options.slowMs !== undefined) {
          incoming.pause();
          setTimeout(() => incoming.resume(), options.slowMs);
        }
      },
    );
    request.once('error', reject);
    request.end(options.body);
  });
}
