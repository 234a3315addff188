import type { Message, ToolCall } from '../core/index.js';
import type { Tool } from './types.js';

export interface ToolOutcome {
  id: string;
  name: string;
  arguments: string;
  result: string;
  isError: boolean;
}

export const CANCELLED = 'cancelled: the turn was aborted before this tool call finished';

/**
 * Runs every call of one assistant message, in parallel. Each call ends in exactly one outcome:
 * the tool's text, or an error result with the failure's text (unknown tool, arguments that do not
 * parse, a tool that throws or is broken before it starts), or `cancelled` when the turn is aborted
 * first. Never rejects. `started` lets the caller report each call before any of them runs.
 */
export function startToolBlock(calls: readonly ToolCall[], tools: ReadonlyMap<string, Tool>, signal: AbortSignal): Promise<ToolOutcome>[] {
  return calls.map((call) => {
    const id = String(call.id);
    const name = typeof call.function?.name === 'string' ? call.function.name : '';
    const args = typeof call.function?.arguments === 'string' ? call.function.arguments : '';
    const outcome = (result: string, isError: boolean): ToolOutcome => ({ id, name, arguments: args, result, isError });
    if (signal.aborted) return Promise.resolve(outcome(CANCELLED, true));
    const work = (async (): Promise<ToolOutcome> => {
      try {
        const tool = tools.get(name);
        if (tool === undefined) {
          const known = [...tools.keys()];
          return outcome(`Error: unknown tool "${name}"${known.length === 0 ? ' (no tools are available)' : ` (available: ${known.join(', ')})`}`, true);
        }
        let parsed: unknown;
        try {
          parsed = args.trim() === '' ? {} : JSON.parse(args);
        } catch (error) {
          return outcome(`Error: the arguments are not valid JSON (${(error as Error).message}); the tool was not run`, true);
        }
        const result: unknown = await tool.run(parsed, { signal });
        return outcome(typeof result === 'string' ? result : (JSON.stringify(result) ?? String(result)), false);
      } catch (error) {
        return outcome(`Error: ${error instanceof Error ? error.message : String(error)}`, true);
      }
    })();
    return new Promise<ToolOutcome>((resolve) => {
      const onAbort = (): void => resolve(outcome(CANCELLED, true));
      signal.addEventListener('abort', onAbort, { once: true });
      void work.then((finished) => {
        signal.removeEventListener('abort', onAbort);
        resolve(finished);
      });
    });
  });
}

/** The tool messages for a finished block, in call order. */
export function toolMessages(outcomes: readonly ToolOutcome[]): Message[] {
  return outcomes.map((outcome) => ({ role: 'tool', tool_call_id: outcome.id, content: outcome.result }));
}
