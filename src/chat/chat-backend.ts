import type { Agent, Tool } from '../agent/index.js';
import type { ProfileName } from '../core/profiles.js';
import type { SessionStore } from '../session/index.js';
import { privateStore } from './private-directory.js';

export interface ChatAgentOptions {
  baseURL: string;
  apiKey: string;
  model: string;
  profile: ProfileName;
  tools: Tool[];
  session: SessionStore;
  systemPrompt: string;
  contextWindow?: number;
  /** When to summarize the oldest turns (see AgentOptions.compaction). */
  compaction?: { threshold?: number } | false;
  fetch: typeof fetch;
  thinking?: boolean;
}

/** The two layers the chat composes: the session store and the agent runner. Tests may pass fakes. */
export interface ChatBackend {
  createStore(path: string): SessionStore;
  createAgent(options: ChatAgentOptions): Agent;
}

/** The real layers, `unstuck/session` and `unstuck/agent`, loaded only when a chat starts. */
export async function loadChatBackend(): Promise<ChatBackend> {
  const session = await import('../session/index.js');
  const agent = await import('../agent/index.js');
  return {
    createStore: (path) => privateStore(session.createTranscriptStore(path), path),
    createAgent: (options) => agent.createAgent(options),
  };
}
