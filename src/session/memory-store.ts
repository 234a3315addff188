import type { Message } from '../core/messages.js';
import type { SessionStore } from './types.js';

/**
 * A store that keeps the session in memory, for tests and for agents that need no file. It copies
 * through JSON like the file stores do, so code tested against it sees what a file would give.
 */
export function createMemoryStore(initial: readonly Message[] = []): SessionStore {
  let stored = copy(initial);
  return {
    load: async () => ({ messages: copy(stored), problems: [] }),
    save: async (messages) => {
      stored = copy(messages);
    },
    append: async (messages) => {
      for (const message of copy(messages)) stored.push(message);
    },
    close: async () => undefined,
  };
}

function copy(messages: readonly Message[]): Message[] {
  return JSON.parse(JSON.stringify(messages)) as Message[];
}
