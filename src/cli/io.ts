/**
 * The CLI's effects, injectable so tests can capture stdout/stderr without a child process.
 *
 * `--log` levels, most to least verbose: debug > info > warn (default) > error. `warn` and `info` (a command's
 * own summary and progress lines) are shown at warn and above; `logInfo` lines (what was resolved) at info and
 * debug; `logDebug` lines (files read, timings, an internal error's stack) at debug only; `--log error` leaves
 * only the error line. main.ts applies the level by dropping what is below it.
 */
export interface Io {
  stdout(text: string): void;
  /** A diagnostic line on stderr (warn level). */
  warn(text: string): void;
  error(text: string): void;
  /** A command's summary or progress line on stderr; optional, dropped when absent. */
  info?(text: string): void;
  /** `info: ...` on stderr, shown with --log info or debug. */
  logInfo?(text: string): void;
  /** `debug: ...` on stderr, shown with --log debug. */
  logDebug?(text: string): void;
  /**
   * Resolves once everything written to stdout has been handed to the operating system; rejects with the first
   * write error (a closed pipe, a full disk). Absent = writes cannot fail (captured output).
   */
  flush?(): Promise<void>;
}

/** The first stdout write error, kept so the command ends with one `error:` line instead of a crash. */
let stdoutError: Error | null = null;
let listening = false;

/**
 * Without a listener a failed write to stdout or stderr (EPIPE from `| head`, ENOSPC from `> /dev/full`) is an
 * unhandled 'error' event, which kills the process with a stack trace after the work is done.
 */
function listen(): void {
  if (listening) return;
  listening = true;
  process.stdout.on('error', (e: Error) => {
    stdoutError ??= e;
  });
  process.stderr.on('error', () => undefined);
}

function writeStdout(text: string): void {
  listen();
  if (stdoutError !== null || process.stdout.destroyed) return;
  process.stdout.write(text, (e) => {
    if (e) stdoutError ??= e;
  });
}

function flushStdout(): Promise<void> {
  listen();
  return new Promise((resolve, reject) => {
    const done = (): void => (stdoutError === null ? resolve() : reject(stdoutError));
    if (stdoutError !== null || process.stdout.destroyed) done();
    // Writes complete in order: the callback of an empty write runs after every earlier one.
    else process.stdout.write('', () => done());
  });
}

export const processIo: Io = {
  stdout: writeStdout,
  warn: (t) => void process.stderr.write(`warning: ${t}\n`),
  error: (t) => void process.stderr.write(`error: ${t}\n`),
  info: (t) => void process.stderr.write(`${t}\n`),
  flush: flushStdout,
  logInfo: (t) => void process.stderr.write(`info: ${t}\n`),
  logDebug: (t) => void process.stderr.write(`debug: ${t}\n`),
};

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `io` with the lines below `level` dropped. */
export function ioAtLevel(io: Io, level: LogLevel): Io {
  const rank = LOG_LEVELS.indexOf(level);
  const drop = (): void => undefined;
  return {
    stdout: (t) => io.stdout(t),
    error: (t) => io.error(t),
    warn: rank <= 2 ? (t) => io.warn(t) : drop,
    info: rank <= 2 ? (t) => io.info?.(t) : drop,
    logInfo: rank <= 1 ? (t) => io.logInfo?.(t) : drop,
    logDebug: rank === 0 ? (t) => io.logDebug?.(t) : drop,
  };
}
