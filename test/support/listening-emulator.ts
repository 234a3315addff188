import { after, before } from 'node:test';
import { createEmulator } from '../../src/emulator/index.js';

/**
 * A strict emulator listening on loopback for the suite's tests: started before them, closed after
 * them. `url` is its base URL once started.
 */
export function useListeningEmulator(options: Parameters<typeof createEmulator>[0] = {}): {
  emulator: ReturnType<typeof createEmulator>;
  readonly url: string;
} {
  const emulator = createEmulator(options);
  let url = '';
  let close: () => Promise<void> = async () => undefined;
  before(async () => {
    const server = await emulator.listen();
    url = server.url;
    close = server.close;
  });
  after(async () => close());
  return {
    emulator,
    get url() {
      return url;
    },
  };
}
