/**
 * Asks the person whether a tool may change something (write a file, run a command).
 * Resolves false when declined or when the turn is aborted while asking.
 */
export type Confirm = (request: { tool: string; action: string }, signal: AbortSignal) => Promise<boolean>;

/** `--yes`: every change is allowed without asking. */
export const allowAll: Confirm = async () => true;

/** No one to ask (one-shot without a terminal and without `--yes`): every change is declined. */
export const denyAll: Confirm = async () => false;

export function declined(tool: string): Error {
  return new Error(`${tool} was not allowed by the user (run with --yes to allow changes without asking)`);
}
