/**
 * Progress of long work on stderr (cli-progress): shown only when stderr is a terminal, `--quiet` is off and
 * the work has already taken about a second — short runs, pipes, logs and CI output stay clean. Never on
 * stdout. It consumes plain callbacks (simulated time and requests done, or units of work done), so any
 * driver can feed it.
 */
import cliProgress from 'cli-progress';
import type { SimProgress } from '../sim/engine-setup.js';

/** Wall time before a bar appears (ms). */
export const PROGRESS_DELAY_MS = 1000;

export interface ProgressStream {
  readonly isTTY?: boolean;
  write(s: string): boolean;
}

export interface ProgressDisplay {
  /** A simulation's progress (simulated time, requests done of the total when known). */
  sim(p: SimProgress): void;
  /** Units of other work done (scenario runs of an evaluation, candidates of a population). */
  units(done: number, total: number): void;
  stop(): void;
}

const fmtSim = (us: number): string => (us / 1e6).toFixed(1);

/**
 * A display for `label` ("run", "evaluate"...); null when nothing should be shown (not a TTY, or quiet).
 * `now` is injectable for tests.
 */
export function progressDisplay(label: string, quiet: boolean, stream: ProgressStream = process.stderr, now: () => number = Date.now): ProgressDisplay | null {
  if (quiet || stream.isTTY !== true) return null;
  const start = now();
  let bar: cliProgress.SingleBar | null = null;
  let known = true;
  const ensure = (total: number | null, unit: string, done: number, payload: Record<string, string>): cliProgress.SingleBar | null => {
    if (bar !== null) return bar;
    if (now() - start < PROGRESS_DELAY_MS) return null;
    known = total !== null && total > 0;
    const format = known
      ? `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {extra} | {rate} ${unit}/s | ETA {eta_formatted}`
      : `${label} {value} ${unit} | {extra} | {rate} ${unit}/s`;
    bar = new cliProgress.SingleBar(
      { format, stream: stream as NodeJS.WritableStream, hideCursor: false, clearOnComplete: false, barsize: 24, etaBuffer: 20, fps: 10, noTTYOutput: false },
      cliProgress.Presets.shades_classic,
    );
    bar.start(known ? (total as number) : 0, done, payload);
    return bar;
  };
  const rate = (done: number): string => {
    const s = (now() - start) / 1000;
    return s > 0 ? (done / s).toFixed(1) : '0';
  };
  return {
    sim(p) {
      const payload = { extra: `sim ${fmtSim(p.simTimeUs)} s`, rate: rate(p.requestsDone) };
      ensure(p.requestsTotal, 'requests', p.requestsDone, payload)?.update(p.requestsDone, payload);
    },
    units(done, total) {
      const payload = { extra: `${done} of ${total} done`, rate: rate(done) };
      ensure(total, 'runs', done, payload)?.update(done, payload);
    },
    stop() {
      bar?.stop();
    },
  };
}
