import type { Agent, Tool } from '../agent/index.js';
import { isUnstuckError, UnstuckError } from '../core/errors.js';
import type { Change } from '../core/index.js';
import type { SessionProblem, SessionStore } from '../session/index.js';
import type { ChatBackend } from './chat-backend.js';
import type { ChatConfig } from './chat-config.js';
import { compactionSettings } from './compaction-settings.js';
import { defaultSystemPrompt } from './system-prompt.js';

export interface OpenedSession {
  id: string;
  path: string;
  agent: Agent;
  store: SessionStore;
  /** What `agent.open()` repaired in the stored history, and what the store could not read. */
  changes: Change[];
  problems: SessionProblem[];
}

/** Builds the agent over the session file at `path` and opens it: load, then repair what is broken. */
export async function openChatSession(input: {
  id: string;
  path: string;
  backend: ChatBackend;
  config: ChatConfig;
  tools: Tool[];
  fetch: typeof fetch;
  cwd: string;
  env?: Record<string, string | undefined>;
}): Promise<OpenedSession> {
  const { id, path, backend, config, tools, cwd } = input;
  const window = compactionSettings({
    profile: config.profile,
    contextWindow: config.contextWindow,
    env: input.env ?? {},
  });
  const store = backend.createStore(path);
  const agent = backend.createAgent({
    baseURL: config.baseURL,
    apiKey: config.apiKey,
    model: config.model,
    profile: config.profile,
    tools,
    session: store,
    systemPrompt: config.systemPrompt ?? defaultSystemPrompt(cwd),
    contextWindow: window.contextWindow,
    compaction: window.compaction,
    fetch: input.fetch,
    ...(config.thinking === undefined ? {} : { thinking: config.thinking }),
  });
  try {
    const { changes, problems } = await agent.open();
    return { id, path, agent, store, changes, problems };
  } catch (error) {
    await store.close().catch(() => undefined);
    if (isUnstuckError(error)) throw error;
    throw new UnstuckError('SESSION_DAMAGED', `session ${id} could not be opened: ${(error as Error).message}`, {
      cause: error,
      file: path,
    });
  }
}
