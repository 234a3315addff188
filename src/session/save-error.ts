import { isUnstuckError, UnstuckError } from '../core/errors.js';

/** A failed write as an `UnstuckError` naming the file (its `cause` keeps the system error). */
export function asSaveError(path: string, error: unknown): UnstuckError {
  if (isUnstuckError(error)) return error;
  return new UnstuckError('IO', `cannot save the session: ${(error as Error).message}`, { file: path, cause: error });
}
