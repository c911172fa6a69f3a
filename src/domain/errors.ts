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

/**
 * A piece of user input, quoted for a message: control characters, invisible characters (byte-order marks,
 * zero-width spaces, replacement characters, lone surrogates) and quotes are escaped, and long text is cut to
 * `max` characters with the rest counted — so binary or hostile input never reaches the terminal raw and an error
 * stays one readable line. The one way messages quote what the user wrote.
 */
export function showValue(text: string, max = 60): string {
  let out = '';
  let shown = 0;
  let i = 0;
  for (; i < text.length && shown < max; i++, shown++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out += text[i]! + text[i + 1]!;
        i++;
        continue;
      }
    }
    out += escapeChar(c, text[i]!);
  }
  const rest = text.length - i;
  return rest > 0 ? `"${out}"… (${rest} more characters)` : `"${out}"`;
}

function escapeChar(c: number, ch: string): string {
  if (ch === '"') return '\\"';
  if (ch === '\\') return '\\\\';
  if (c === 0x0a) return '\\n';
  if (c === 0x0d) return '\\r';
  if (c === 0x09) return '\\t';
  if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0x200b && c <= 0x200f) || c === 0x2028 || c === 0x2029 || c === 0xfeff || c === 0xfffd || (c >= 0xd800 && c <= 0xdfff)) {
    return c <= 0xff ? `\\x${c.toString(16).padStart(2, '0')}` : `\\u${c.toString(16).padStart(4, '0')}`;
  }
  return ch;
}

/**
 * The last line of defence of an error message: one line (newlines become `\n`), no raw control or invisible
 * characters, at most `max` characters. Text quoted with {@link showValue} passes through unchanged.
 */
export function oneLine(message: string, max = 2000): string {
  let out = '';
  for (let i = 0; i < message.length; i++) {
    const c = message.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < message.length) {
      const d = message.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out += message[i]! + message[i + 1]!;
        i++;
        continue;
      }
    }
    const ch = message[i]!;
    out += ch === '"' || ch === '\\' ? ch : escapeChar(c, ch);
    if (out.length > max) return `${out.slice(0, max)}… (message cut at ${max} characters)`;
  }
  return out;
}
