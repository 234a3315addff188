import { isUnstuckError } from '../core/errors.js';

/** One line, no stack trace: `unstuck fix: history.json:3:14: Unexpected token`. */
export function describeFailure(commandName: string, error: unknown): string {
  if (isUnstuckError(error)) {
    const place = [error.file, error.position].filter((part) => part !== undefined && part !== '').join(':');
    return `unstuck ${commandName}: ${place === '' ? '' : `${place}: `}${error.message}`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return `unstuck ${commandName}: ${message.split('\n')[0]}`;
}
