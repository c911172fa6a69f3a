/**
 * Time left in a run, for progress displays and the library's progress: pure (the caller passes the wall clock).
 */
import type { SimProgress } from './engine-setup.js';

/**
 * Time left from the pace of the recent past: the work done over the last half of the elapsed time (at least
 * half a second), so the start-up (JIT compilation, the first arrivals) stops counting once the run is under way.
 */
export class EtaEstimator {
  private readonly t: number[] = [];
  private readonly f: number[] = [];
  private head = 0;

  /** Records `fraction` (0..1) of the work done at `nowMs`; returns the seconds left, or null while unknown. */
  sample(nowMs: number, fraction: number): number | null {
    const last = this.t.length - 1;
    if (last < 0 || nowMs - (this.t[last] as number) >= 20 || fraction >= 1) {
      this.t.push(nowMs);
      this.f.push(fraction);
    }
    const first = this.t[0] as number;
    const from = nowMs - Math.max(500, (nowMs - first) / 2);
    while (this.head < this.t.length - 1 && (this.t[this.head + 1] as number) <= from) this.head++;
    if (this.head > 4096) {
      // Keep the first sample (the elapsed time is measured from it); drop the ones behind the window.
      this.t.splice(1, this.head - 1);
      this.f.splice(1, this.head - 1);
      this.head = 1;
    }
    const t0 = this.t[this.head] as number;
    const f0 = this.f[this.head] as number;
    if (fraction >= 1) return 0;
    if (nowMs <= t0 || fraction <= f0) return null;
    return ((nowMs - t0) / 1000) * ((1 - fraction) / (fraction - f0));
  }
}

/**
 * How far a simulation with a known total has got, for the ETA: arrivals weigh twice what completions do
 * (generating, hashing and routing a request costs more than finishing it), so an overloaded run, whose
 * completions trail its arrivals, is not predicted at its early completion pace (3-6x too long).
 */
export function simFraction(p: Pick<SimProgress, 'requestsArrived' | 'requestsDone' | 'requestsTotal'>): number | null {
  if (p.requestsTotal === null || p.requestsTotal <= 0) return null;
  return Math.min(1, (2 * Math.min(p.requestsArrived, p.requestsTotal) + p.requestsDone) / (3 * p.requestsTotal));
}
