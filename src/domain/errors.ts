/**
 * The one error type of blis-ts. Every error the library raises on purpose is a {@link BlisError} (or a
 * subclass that adds layer-specific fields): a stable `code`, a one-line message that says what was wrong and
 * how to fix it, and where the bad value came from — a config path / flag (`field`) and, for files, `file`,
 * `line` and `col`. Anything else that escapes is a bug and the CLI reports it as `internal` (exit 70).
 */

/** Where an error points: a file position, a config path or flag, or both. */
export interface ErrorWhere {
  /** The config key path (`routing.scorers[1].weight`, `numInstances`) or flag (`--rate`). */
  readonly field?: string | undefined;
  /** The file the bad value was read from, as the user named it. */
  readonly file?: string | undefined;
  /** 1-based line and column in `file`. */
  readonly line?: number | undefined;
  readonly col?: number | undefined;
  readonly cause?: unknown;
}

export class BlisError extends Error {
  readonly code: string;
  readonly field: string | undefined;
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly col: number | undefined;

  constructor(code: string, message: string, where: ErrorWhere = {}) {
    super(message, where.cause === undefined ? undefined : { cause: where.cause });
    this.name = 'BlisError';
    this.code = code;
    this.field = where.field;
    this.file = where.file;
    this.line = where.line;
    this.col = where.col;
  }
}

/** True for errors raised on purpose by blis-ts (bad input, a failed policy): shown as one line, exit 2. */
export function isBlisError(e: unknown): e is BlisError {
  return e instanceof BlisError;
}

/** `file:line:col` (or the parts known), for messages. */
export function formatWhere(file: string | undefined, line?: number, col?: number): string {
  if (file === undefined) return '';
  if (line === undefined || line <= 0) return file;
  return col === undefined || col <= 0 ? `${file}:${line}` : `${file}:${line}:${col}`;
}
