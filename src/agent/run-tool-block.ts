import type { Message, ToolCall } from '../core/index.js';
import type { AgentEvent, Tool } from './types.js';

export interface ToolOutcome {
  id: string;
  name: string;
  arguments: string;
  result: string;
  isError: boolean;
}

export const CANCELLED = 'cancelled: the turn was aborted before this tool call finished';

/** One assistant message's calls, started. */
export interface ToolBlock {
  /** Every call's outcome, in call order, once all of them have ended (after an abort, at once). */
  outcomes: Promise<ToolOutcome[]>;
  /**
   * `tool-call-start` for every call, then `tool-call-end` for each in call order as it ends;
   * returns the outcomes. A consumer that stops reading leaves `outcomes` to answer the calls.
   */
  events(): AsyncGenerator<AgentEvent, ToolOutcome[]>;
}

/** Starts every call of one assistant message (see `startToolBlock`) and reports them as events. */
export function runToolBlock(
  calls: readonly ToolCall[],
  tools: ReadonlyMap<string, Tool>,
  signal: AbortSignal,
): ToolBlock {
  const pending = startToolBlock(calls, tools, signal);
  return {
    outcomes: Promise.all(pending),
    async *events() {
      for (const call of calls)
        yield {
          type: 'tool-call-start',
          id: String(call.id),
          name: call.function?.name ?? '',
          arguments: call.function?.arguments ?? '',
        };
      const outcomes: ToolOutcome[] = [];
      for (const result of pending) {
        const outcome = await result;
        outcomes.push(outcome);
        yield {
          type: 'tool-call-end',
          id: outcome.id,
          name: outcome.name,
          result: outcome.result,
          isError: outcome.isError,
        };
      }
      return outcomes;
    },
  };
}

/**
 * Runs every call of one assistant message. Calls run in the model's order, except that a run of
 * consecutive read-only calls (`Tool.readOnly`) runs concurrently; a call with side effects (every
 * tool that does not declare itself read-only) starts only after everything before it has
 * finished and runs alone, so `write_file` then `edit_file` of one file gives the sequential result.
 * Each call ends in exactly one outcome: the tool's text, or an error result with the failure's
 * text (unknown tool, arguments that do not parse, a tool that throws or is broken before it
 * starts), or `cancelled` when the turn is aborted first; a call not yet started when the turn is
 * aborted never starts. Never rejects. The promises come back in call order, one per call, so the
 * caller can report each call before any of them finishes.
 */
export function startToolBlock(
  calls: readonly ToolCall[],
  tools: ReadonlyMap<string, Tool>,
  signal: AbortSignal,
): Promise<ToolOutcome>[] {
  // One abort listener for the whole block, however many calls it has (a listener per call made
  // Node print MaxListenersExceededWarning after ten calls in one block).
  let stopListening = (): void => undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    if (signal.aborted) {
      resolve('aborted');
      return;
    }
    const onAbort = (): void => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    stopListening = () => signal.removeEventListener('abort', onAbort);
  });

  /** Everything a side-effecting call must wait for: the last such call, and the reads after it. */
  let previousWrite: Promise<unknown> = Promise.resolve();
  let readsSince: Promise<unknown>[] = [];
  const finished: Promise<ToolOutcome>[] = [];
  const outcomes = calls.map((call) => {
    const id = String(call.id);
    const name = typeof call.function?.name === 'string' ? call.function.name : '';
    const args = typeof call.function?.arguments === 'string' ? call.function.arguments : '';
    const outcome = (result: string, isError: boolean): ToolOutcome => ({ id, name, arguments: args, result, isError });
    const tool = tools.get(name);
    // A call that cannot run (unknown tool) touches nothing: it goes with the reads. A declaration
    // that cannot even be read (a throwing getter) counts as side effects, never as a crash of the block.
    const readOnly = tool === undefined || declaresReadOnly(tool);
    const after = readOnly ? previousWrite : Promise.all([previousWrite, ...readsSince]);
    const work = after.then(() => runCall(tool, name, args, tools, signal, outcome));
    finished.push(work);
    if (readOnly) readsSince.push(work);
    else {
      previousWrite = work;
      readsSince = [];
    }
    return Promise.race([work, aborted.then(() => outcome(CANCELLED, true))]);
  });
  void Promise.all(finished).then(stopListening);
  return outcomes;
}

function declaresReadOnly(tool: Tool): boolean {
  try {
    return tool.readOnly === true;
  } catch {
    return false;
  }
}

async function runCall(
  tool: Tool | undefined,
  name: string,
  args: string,
  tools: ReadonlyMap<string, Tool>,
  signal: AbortSignal,
  outcome: (result: string, isError: boolean) => ToolOutcome,
): Promise<ToolOutcome> {
  if (signal.aborted) return outcome(CANCELLED, true);
  try {
    if (tool === undefined) {
      const known = [...tools.keys()];
      return outcome(
        `Error: unknown tool "${name}"${known.length === 0 ? ' (no tools are available)' : ` (available: ${known.join(', ')})`}`,
        true,
      );
    }
    let parsed: unknown;
    try {
      parsed = args.trim() === '' ? {} : JSON.parse(args);
    } catch (error) {
      return outcome(
        `Error: the arguments are not valid JSON (${(error as Error).message}); the tool was not run`,
        true,
      );
    }
    const result: unknown = await tool.run(parsed, { signal });
    return outcome(typeof result === 'string' ? result : (JSON.stringify(result) ?? String(result)), false);
  } catch (error) {
    return outcome(`Error: ${error instanceof Error ? error.message : String(error)}`, true);
  }
}

/** The tool messages for a finished block, in call order. */
export function toolMessages(outcomes: readonly ToolOutcome[]): Message[] {
  return outcomes.map((outcome) => ({ role: 'tool', tool_call_id: outcome.id, content: outcome.result }));
}
