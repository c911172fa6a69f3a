/** The CLI's effects, injectable so tests can capture stdout/stderr without a child process. */
export interface Io {
  stdout(text: string): void;
  /** A diagnostic line on stderr (warn level). */
  warn(text: string): void;
  error(text: string): void;
  /** An informational line on stderr (progress, summaries); optional, dropped when absent. */
  info?(text: string): void;
}

export const processIo: Io = {
  stdout: (t) => void process.stdout.write(t),
  warn: (t) => void process.stderr.write(`warning: ${t}\n`),
  error: (t) => void process.stderr.write(`error: ${t}\n`),
  info: (t) => void process.stderr.write(`${t}\n`),
};
