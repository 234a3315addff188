import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Message } from '../../src/index.js';

/** A call with no result, then the user's next message: the smallest history `fix` changes. */
export const unansweredCall: Message[] = [
  { role: 'user', content: 'q' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }],
  },
  { role: 'user', content: 'next' },
];

/** The CLI's entry point, for tests that run it as a process (signals, pipes, concurrent writers). */
export const CLI_MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** A temporary directory made before the suite's tests and removed after them; `path(name)` names a file in it. */
export function useTemporaryDirectory(prefix: string): { path(name: string): string } {
  let directory = '';
  before(async () => {
    directory = await mkdtemp(join(tmpdir(), prefix));
  });
  after(async () => {
    await rm(directory, { recursive: true, force: true });
  });
  return { path: (name) => join(directory, name) };
}
