/**
 * User-facing errors. Every bad input ends as one line on stderr naming the flag, field or row and the fix,
 * with exit code 2 ({@link EXIT_USAGE}); only the CLI exits.
 */
import { BlisError, isBlisError } from '../domain/errors.js';
export const EXIT_USAGE = 2;
export const EXIT_FAILURE = 1;
/** An unexpected exception (a bug): EX_SOFTWARE from sysexits.h. */
export const EXIT_INTERNAL = 70;

export class UsageError extends BlisError {
  constructor(code: string, message: string) {
    super(code, message);
    this.name = 'UsageError';
  }
}

/**
 * A command that could not finish for a reason outside its input — the job queue's Redis went away, no worker
 * came, the user interrupted it — with its own exit code (1, or 130 for an interrupt) instead of 2.
 */
export class RunFailure extends BlisError {
  constructor(code: string, message: string, readonly exitCode: number) {
    super(code, message);
    this.name = 'RunFailure';
  }
}

/**
 * Errors raised on purpose: every {@link BlisError}, and the sandbox's own coded errors (the sandbox layer
 * imports nothing of the simulator, so its error class cannot extend BlisError).
 */
export function isCodedError(e: unknown): e is Error & { code: string } {
  return isBlisError(e) || (e instanceof Error && e.name === 'SandboxError' && typeof (e as { code?: unknown }).code === 'string');
}
