/**
 * The few shapes this plugin reads from the harness. Types come from the host packages
 * (peer dependencies); the agent is typed structurally so the plugin does not need
 * `@deepseek-ai/dsh-agent` at all — it only reads `session` and calls `send`.
 */
import type { ContentBlock, Message, ToolCallBlock, ToolResultBlock, UserMessage } from '@deepseek-ai/dsh-llm';
import type { Session, SessionEvent } from '@deepseek-ai/dsh-session';

export type { ContentBlock, Message, Session, SessionEvent, ToolCallBlock, ToolResultBlock, UserMessage };

export type InboxTarget = 'next-turn' | 'next-step';

/** What the plugin uses of a live agent (`@deepseek-ai/dsh-agent`'s `Agent`). */
export interface AgentLike {
  readonly session: Session;
  readonly options?: { readonly model?: string };
  send(message: UserMessage, target: InboxTarget, wakeup: boolean): void;
}

export type PreStepDecision = { kind: 'reject' } | { kind: 'enter'; messages: UserMessage[] };
export type RequestErrorAction = { kind: 'retry' } | undefined;

export interface FailureLike {
  readonly message: string;
  readonly code: string;
  readonly status?: number;
}

export function isToolCall(block: ContentBlock): block is ToolCallBlock {
  return block.type === 'tool-call';
}

export function isToolResult(block: ContentBlock): block is ToolResultBlock {
  return block.type === 'tool-result';
}

/** Tool-call blocks of an assistant message (none for any other role). */
export function toolCallsOf(message: Message): ToolCallBlock[] {
  return message.role === 'assistant' ? message.content.filter(isToolCall) : [];
}

/** A user-role message whose every block is a tool result: it goes on the wire as `tool` messages only. */
export function isResultOnly(message: Message): boolean {
  return message.role === 'user' && message.content.length > 0 && message.content.every(isToolResult);
}

/** A user-role message carrying at least one tool result. */
export function hasResults(message: Message): boolean {
  return message.role === 'user' && message.content.some(isToolResult);
}

/**
 * The agent hooks, as `@deepseek-ai/dsh-agent` 0.1.0-rc.8 declares them (`runtime-types.ts`),
 * narrowed to what this plugin reads. Declared here because the plugin does not depend on
 * `dsh-agent`; with it present the declarations merge as overloads.
 */
declare module '@deepseek-ai/cordis' {
  interface Events {
    'agent/status'(payload: { agent: AgentLike; status: 'idle' | 'running' }): void;
    'agent/pre-step'(
      payload: { agent: AgentLike; messages: UserMessage[]; turn: number; step: number; signal: AbortSignal },
      next: () => Promise<PreStepDecision>,
    ): Promise<PreStepDecision>;
    'agent/request-error'(
      payload: {
        agent: AgentLike;
        turn: number;
        step: number;
        provider: string;
        failure: FailureLike;
        retryPolicy: unknown;
        signal: AbortSignal;
      },
      next: () => Promise<RequestErrorAction>,
    ): Promise<RequestErrorAction>;
  }
}
