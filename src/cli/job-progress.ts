/**
 * Progress of many jobs on stderr: a cli-progress bar on a terminal; elsewhere (logs, CI, pipes) one plain line
 * at most every 5 s and a last one at the end, so a long sweep still shows it is moving.
 */
import { SingleBar } from 'cli-progress';

export interface JobProgress {
  /** One job ended (`cached`: its result was already in the queue, reused; `failed`: no result). */
  done(cached: boolean, failed: boolean): void;
  finish(): void;
}

export function jobProgress(what: string, total: number, out: NodeJS.WriteStream = process.stderr): JobProgress {
  let done = 0;
  let cached = 0;
  let failed = 0;
  const text = (): string => `${what}: ${done}/${total} done (${cached} reused, ${failed} failed)`;
  if (out.isTTY === true) {
    const bar = new SingleBar({
      stream: out,
      format: `${what} [{bar}] {value}/{total} | {cached} reused | {failed} failed | eta {eta_formatted}`,
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 50,
    });
    bar.start(total, 0, { cached: 0, failed: 0 });
    return {
      done(c, f) {
        done++;
        if (c) cached++;
        if (f) failed++;
        bar.update(done, { cached, failed });
      },
      finish() {
        bar.stop();
      },
    };
  }
  let last = performance.now();
  return {
    done(c, f) {
      done++;
      if (c) cached++;
      if (f) failed++;
      const now = performance.now();
      if (now - last >= 5000 && done < total) {
        last = now;
        out.write(`${text()}\n`);
      }
    },
    finish() {
      out.write(`${text()}\n`);
    },
  };
}
