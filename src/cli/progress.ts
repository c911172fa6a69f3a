/**
 * Progress of long work on stderr (cli-progress): shown only when stderr is a terminal, `--quiet` is off and
 * the work has already taken about a second — short runs, pipes, logs and CI output stay clean. Never on
 * stdout. It consumes plain callbacks (simulated time and requests done, or units of work done), so any
 * driver can feed it.
 */
import cliProgress from 'cli-progress';
import type { SimProgress } from '../sim/engine-setup.js';
import { EtaEstimator, simFraction } from '../sim/eta.js';

export { EtaEstimator, simFraction };

/** Wall time before a bar appears (ms). */
export const PROGRESS_DELAY_MS = 1000;

export interface ProgressStream {
  readonly isTTY?: boolean;
  write(s: string): boolean;
}

export interface ProgressDisplay {
  /** A simulation's progress (simulated time, requests done of the total when known). */
  sim(p: SimProgress): void;
  /** Requests of a workload generated before the simulation starts (of the total when known). */
  generating(done: number, total: number | null): void;
  /** Units of other work done (scenario runs of an evaluation, candidates of a population). */
  units(done: number, total: number): void;
  stop(): void;
}

const fmtSim = (us: number): string => (us / 1e6).toFixed(1);

/** A duration in whole seconds as `42s`, `3m07s` or `2h05m` (rounded once, so never `1m60s`). */
export function formatEta(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  const pad = (v: number): string => String(v).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  const m = Math.round(s / 60);
  return `${Math.floor(m / 60)}h${pad(m % 60)}m`;
}

/**
 * A display for `label` ("run", "evaluate"...); null when nothing should be shown (not a TTY, or quiet).
 * `now` is injectable for tests.
 */
export function progressDisplay(label: string, quiet: boolean, stream: ProgressStream = process.stderr, now: () => number = Date.now): ProgressDisplay | null {
  if (quiet || stream.isTTY !== true) return null;
  const start = now();
  let bar: cliProgress.SingleBar | null = null;
  let phase = '';
  let phaseStart = start;
  let eta = new EtaEstimator();
  const ensure = (which: string, total: number | null, unit: string, done: number, payload: Record<string, string>): cliProgress.SingleBar | null => {
    if (phase !== which) {
      bar?.stop();
      bar = null;
      phase = which;
      phaseStart = now();
      eta = new EtaEstimator();
    }
    if (bar !== null) return bar;
    if (now() - start < PROGRESS_DELAY_MS) return null;
    const known = total !== null && total > 0;
    const title = which === 'generate' ? `${label}: generating the workload` : label;
    const format = known
      ? `${title} [{bar}] {percentage}% | {value}/{total} ${unit} | {extra} | {rate} ${unit}/s | ETA {eta_left}`
      : `${title} {value} ${unit} | {extra} | {rate} ${unit}/s`;
    bar = new cliProgress.SingleBar(
      { format, stream: stream as NodeJS.WritableStream, hideCursor: false, clearOnComplete: false, barsize: 24, fps: 10, noTTYOutput: false },
      cliProgress.Presets.shades_classic,
    );
    bar.start(known ? (total) : 0, done, payload);
    return bar;
  };
  const rate = (done: number): string => {
    const s = (now() - phaseStart) / 1000;
    return s > 0 ? (done / s).toFixed(1) : '0';
  };
  const left = (fraction: number | null): string => {
    if (fraction === null) return '?';
    const s = eta.sample(now(), fraction);
    return s === null ? '?' : formatEta(s);
  };
  return {
    sim(p) {
      const b = ensure('sim', p.requestsTotal, 'requests', p.requestsDone, { extra: '', rate: '0', eta_left: '?' });
      b?.update(p.requestsDone, { extra: `sim ${fmtSim(p.simTimeUs)} s`, rate: rate(p.requestsDone), eta_left: left(simFraction(p)) });
      if (b === null) left(simFraction(p));
    },
    generating(done, total) {
      const b = ensure('generate', total, 'requests', done, { extra: '', rate: '0', eta_left: '?' });
      const fraction = total !== null && total > 0 ? Math.min(1, done / total) : null;
      b?.update(done, { extra: total === null ? 'total unknown' : `${done} of ${total}`, rate: rate(done), eta_left: left(fraction) });
      if (b === null) left(fraction);
    },
    units(done, total) {
      const b = ensure('units', total, 'runs', done, { extra: '', rate: '0', eta_left: '?' });
      b?.update(done, { extra: `${done} of ${total} done`, rate: rate(done), eta_left: left(total > 0 ? done / total : null) });
      if (b === null) left(total > 0 ? done / total : null);
    },
    stop() {
      bar?.stop();
    },
  };
}
