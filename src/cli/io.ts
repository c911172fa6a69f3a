/** The CLI's effects, injectable so tests can capture stdout/stderr without a child process. */
export interface Io {
  stdout(text: string): void;
  /** A diagnostic line on stderr (warn level). */
  warn(text: string): void;
  error(text: string): void;
  /** An informational line on stderr (progress, summaries); optional, dropped when absent. */
  info?(text: string): void;
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
};
