/**
 * What the chat needs of the agent runner and the session store, written down from the agreed
 * contracts (`unstuck/agent`, `unstuck/session`). The chat is typed against this port so it
 * states exactly which parts it relies on; the real factories are plugged in by `chat-runtime.ts`.
 */
import type { Message } from '../../core/messages.js';

export interface Tool {
  name: string;
  description: string;
  parameters: object;
  run(args: unknown, context: { signal: AbortSignal }): Promise<string>;
}

export interface ChangeLike {
  kind: string;
  index: number;
  toolCallId?: string;
  detail: string;
}

export interface SessionProblem {
  file: string;
  line?: number;
  why: string;
}

export interface SessionStoreLike {
  load(): Promise<{ messages: Message[]; problems: SessionProblem[] }>;
  save(messages: readonly Message[]): Promise<void>;
  close(): Promise<void>;
}

export type AgentEvent =
  | { type: 'repair'; changes: ChangeLike[] }
  | { type: 'compact'; omittedMessages: number; estimatedTokens: number }
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  | { type: 'tool-call-start'; id: string; name: string; arguments: string }
  | { type: 'tool-call-end'; id: string; name: string; result: string; isError: boolean }
  | { type: 'retry'; reason: string; attempt: number; delayMs: number }
  | { type: 'error'; message: string; rule?: string; status?: number }
  | { type: 'turn-end'; reason: 'stop' | 'error' | 'aborted'; usage?: { promptTokens: number; completionTokens: number } };

export interface AgentLike {
  readonly messages: readonly Message[];
  open(): Promise<{ changes: ChangeLike[]; problems: SessionProblem[] }>;
  runTurn(text: string, options?: { signal?: AbortSignal }): AsyncIterable<AgentEvent>;
}
