/**
 * User-facing errors. Every bad input ends as one line on stderr naming the flag, field or row and the fix,
 * with exit code 2 ({@link EXIT_USAGE}); only the CLI exits.
 */
export const EXIT_USAGE = 2;
export const EXIT_FAILURE = 1;

export class UsageError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'UsageError';
    this.code = code;
  }
}

/** Errors from the library layers that carry a stable code and a user-facing message. */
export function isCodedError(e: unknown): e is Error & { code: string } {
  return e instanceof Error && typeof (e as { code?: unknown }).code === 'string';
}
