import type { ChatBackend } from './chat-backend.js';
import type { ChatConfig } from './chat-config.js';
import type { ChatIo } from './chat-io.js';
import type { OutputShown } from './chat-renderer.js';
import type { SessionDirectory } from './session-directory.js';

/** What both chat modes share: set up once by the `chat` command. */
export interface ChatContext {
  io: ChatIo;
  config: ChatConfig;
  backend: ChatBackend;
  sessions: SessionDirectory;
  /** `fetch` with connection failures explained in one line. */
  fetch: typeof fetch;
  /** `--yes`: changes are made without asking. */
  yes: boolean;
  /** `--full-output`: each tool result shown whole under its call rather than a preview. */
  output?: OutputShown;
}

export type { SessionChoice } from './session-directory.js';
