import { AsyncLocalStorage } from 'node:async_hooks';
import type { Tool } from '../agent/index.js';

/** The tool call being run: its name and the arguments the model gave. */
export interface ToolCallInfo {
  name: string;
  args: unknown;
}

const current = new AsyncLocalStorage<ToolCallInfo>();

/**
 * Tools whose runs know which call they belong to: a confirmation asked from inside a tool can
 * then show what the call will do (the content to be written) without the tool passing it along.
 * Calls of one block run at once; each sees its own arguments.
 */
export function withCallContext(tools: readonly Tool[]): Tool[] {
  return tools.map((tool) => ({
    ...tool,
    run: (args, context) => current.run({ name: tool.name, args }, () => tool.run(args, context)),
  }));
}

/** The call whose run this is, if any. */
export function currentToolCall(): ToolCallInfo | undefined {
  return current.getStore();
}
