/**
 * One error type for the whole package, with a stable `code`. Check it with `isUnstuckError`,
 * not `instanceof`: two copies of the package in one process must still agree.
 */
export type UnstuckErrorCode =
  | 'INPUT_INVALID' // a document is not JSON, or not a history
  | 'PROFILE_UNKNOWN'
  | 'SESSION_DAMAGED'
  | 'SESSION_LOCKED'
  | 'SESSION_CONFLICT' // a database session was written by another writer since this store last read it
  | 'SESSION_SCHEMA' // a database holds a session schema newer than this version knows
  | 'USAGE'
  | 'IO'
  | 'UPSTREAM'
  | 'CONFIG';

const BRAND = Symbol.for('unstuck.error');

export class UnstuckError extends Error {
  readonly code: UnstuckErrorCode;
  /** Where the problem is, when it has a place: a file, and a line/column or a message index. */
  readonly file?: string;
  readonly position?: string;

  constructor(
    code: UnstuckErrorCode,
    message: string,
    options: { cause?: unknown; file?: string; position?: string } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'UnstuckError';
    this.code = code;
    if (options.file !== undefined) this.file = options.file;
    if (options.position !== undefined) this.position = options.position;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

export function isUnstuckError(value: unknown): value is UnstuckError {
  return value !== null && typeof value === 'object' && (value as Record<symbol, unknown>)[BRAND] === true;
}
