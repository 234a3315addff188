import { serveHandler } from '../http/node/serve-handler.js';
import { json } from './wires/frames.js';

/**
 * Serves the emulator on the shared node carrier (http/node/serve-handler.ts). A stand-in provider
 * holds nothing a page could read, so it answers any `Host` (a container reaching it by an
 * address), and sends each status at once, so a scripted drop stays a 200 cut short. A handler
 * failure is the emulator's own 500, never a dropped request.
 */
export async function listenOn(
  handle: (request: Request) => Promise<Response>,
  options: { port?: number; host?: string } = {},
): Promise<{ url: string; close(): Promise<void> }> {
  const served = await serveHandler(
    async (request) => {
      try {
        return await handle(request);
      } catch (error) {
        return json(500, {
          error: {
            message: `emulator failure: ${error instanceof Error ? error.message : String(error)}`,
            type: 'server_error',
            param: null,
            code: null,
          },
        });
      }
    },
    { port: options.port ?? 0, host: options.host ?? '127.0.0.1', allowHosts: 'any', sendHead: 'at-once' },
  );
  return { url: served.url, close: () => served.close() };
}
