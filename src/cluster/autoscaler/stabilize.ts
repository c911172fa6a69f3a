/**
 * Stabilization windows between the scaling decisions and their actuation, per target and direction.
 *
 * The reference (autoscaler.go) uses timers: a direction's decision must recur on every tick for the whole
 * window (a tick without it restarts the timer). The Kubernetes HPA (normalizeDesiredReplicasWithBehaviors)
 * keeps each tick's recommendation instead and acts on the lowest one of the up window / the highest one of the
 * down window, so a single dissenting tick limits a step instead of restarting the wait.
 */
import type { ScaleDelta } from '../../routing/autoscale-saturation.js';

export interface StabilizationWindows {
  readonly upUs: number;
  readonly downUs: number;
}

export interface Stabilizer {
  /** The decisions of the tick at `now` that pass; `current` holds each evaluated target's replica count. */
  apply(now: number, decisions: readonly ScaleDelta[], current: ReadonlyMap<string, number>): ScaleDelta[];
}

/** The reference's rule: a direction's timer starts at its first signal and resets when a tick lacks it. */
export class TimerStabilizer implements Stabilizer {
  private readonly upFirst = new Map<string, number>();
  private readonly downFirst = new Map<string, number>();

  constructor(private readonly w: StabilizationWindows) {}

  apply(now: number, decisions: readonly ScaleDelta[]): ScaleDelta[] {
    const ups = new Set<string>();
    const downs = new Set<string>();
    for (const d of decisions) (d.delta > 0 ? ups : downs).add(d.model);
    for (const m of [...this.upFirst.keys()]) if (!ups.has(m)) this.upFirst.delete(m);
    for (const m of [...this.downFirst.keys()]) if (!downs.has(m)) this.downFirst.delete(m);
    const passed: ScaleDelta[] = [];
    for (const d of decisions) {
      if (d.delta === 0) continue;
      const up = d.delta > 0;
      const timers = up ? this.upFirst : this.downFirst;
      const window = up ? this.w.upUs : this.w.downUs;
      let first = timers.get(d.model);
      if (first === undefined) {
        timers.set(d.model, now);
        if (window > 0) continue;
        first = now;
      }
      if (now - first < Math.trunc(window)) continue;
      timers.delete(d.model);
      passed.push(d);
    }
    return passed;
  }
}

/**
 * The HPA's rule (corrected semantics): every tick records each target's recommendation (current + delta; no
 * decision = stay where it is); a scale-up goes to the lowest recommendation within the up window, a
 * scale-down to the highest within the down window (a window of 0 acts on the tick's own recommendation). The
 * replica count a target starts with is its first recommendation, so no window is skipped at the first tick.
 */
export class HpaStabilizer implements Stabilizer {
  private readonly recommendations = new Map<string, { t: number; desired: number }[]>();

  constructor(private readonly w: StabilizationWindows) {}

  apply(now: number, decisions: readonly ScaleDelta[], current: ReadonlyMap<string, number>): ScaleDelta[] {
    const upUs = Math.trunc(this.w.upUs);
    const downUs = Math.trunc(this.w.downUs);
    const keep = Math.max(upUs, downUs);
    const byTarget = new Map<string, ScaleDelta>();
    for (const d of decisions) if (d.delta !== 0) byTarget.set(d.model, d);
    const passed: ScaleDelta[] = [];
    for (const [target, cur] of [...current].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
      const d = byTarget.get(target);
      const desired = cur + (d?.delta ?? 0);
      // A target seen for the first time has been at its size until now: that counts as a recommendation.
      const recs = (this.recommendations.get(target) ?? [{ t: now, desired: cur }]).filter((r) => now - r.t < keep || r.t === now);
      recs.push({ t: now, desired });
      this.recommendations.set(target, recs);
      let upRec = desired;
      let downRec = desired;
      for (const r of recs) {
        if (now - r.t < upUs) upRec = Math.min(upRec, r.desired);
        if (now - r.t < downUs) downRec = Math.max(downRec, r.desired);
      }
      const stabilized = Math.min(Math.max(cur, upRec), downRec);
      if (d !== undefined && stabilized !== cur) passed.push({ ...d, delta: stabilized - cur });
    }
    return passed;
  }
}
