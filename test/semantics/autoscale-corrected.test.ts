/**
 * The corrected forms of the autoscaler entries of docs/reference-differences.md: D9 (the HPA's stabilization
 * rule instead of the reference's timers), shown on scripted decision sequences through both stabilizers and
 * through a bundle-configured run in both `--semantics` modes.
 */
import { describe, expect, it } from 'vitest';
import { HpaStabilizer, TimerStabilizer, type Stabilizer } from '../../src/cluster/autoscaler/stabilize.js';
import type { ScaleDelta } from '../../src/routing/autoscale-saturation.js';

const V = { gpuType: 'H100', tp: 1 };

/** Runs one target through ticks every 10 s: `deltas[k]` is tick k's decision (0 = none) at replica count `replicas`. */
function drive(s: Stabilizer, deltas: readonly number[], start: number): { tick: number; delta: number }[] {
  let replicas = start;
  const out: { tick: number; delta: number }[] = [];
  deltas.forEach((delta, k) => {
    const decisions: ScaleDelta[] = delta === 0 ? [] : [{ model: 'm', variant: V, delta }];
    for (const p of s.apply(k * 10_000_000, decisions, new Map([['m', replicas]]))) {
      out.push({ tick: k, delta: p.delta });
      replicas += p.delta;
    }
  });
  return out;
}

describe('D9: stabilization windows', () => {
  const windows = { upUs: 0, downUs: 30_000_000 };

  it('a noisy scale-down signal: the timer restarts on every gap, the HPA acts on the highest recent recommendation', () => {
    // Down by 1 on three of every four ticks (a quiet tick in between), starting at 6 replicas.
    const noisy = [-1, -1, -1, 0, -1, -1, -1, 0, -1, -1, -1, 0, -1, -1, -1, 0];
    // Reference: a 30 s window needs 4 consecutive down ticks (0, 10, 20, 30 s); there are never more than 3.
    expect(drive(new TimerStabilizer(windows), noisy, 6)).toEqual([]);
    // HPA: the down window holds the last 3 ticks (a tick 30 s old has left it); the starting size and each quiet
    // tick's "stay" hold the count for two more ticks, then three down ticks in a row allow one step.
    expect(drive(new HpaStabilizer(windows), noisy, 6)).toEqual([{ tick: 6, delta: -1 }, { tick: 10, delta: -1 }, { tick: 14, delta: -1 }]);
  });

  it('a sustained scale-down signal: the timer restarts after each step, the HPA steps once per window', () => {
    const sustained = Array<number>(10).fill(-1);
    // Reference: 4 consecutive ticks per step (the timer starts again at the tick after a step).
    expect(drive(new TimerStabilizer(windows), sustained, 8)).toEqual([{ tick: 3, delta: -1 }, { tick: 7, delta: -1 }]);
    // HPA: a step as soon as the last 30 s recommend less than the current count: every 3 ticks.
    expect(drive(new HpaStabilizer(windows), sustained, 8)).toEqual([{ tick: 3, delta: -1 }, { tick: 6, delta: -1 }, { tick: 9, delta: -1 }]);
  });

  it('a scale-up window takes the lowest recommendation of the window, never restarting', () => {
    const up = { upUs: 20_000_000, downUs: 0 };
    // +2, +1, +3 at 4 replicas: recommendations 6, 5, 7.
    expect(drive(new TimerStabilizer(up), [2, 1, 3, 0, 3], 4)).toEqual([{ tick: 2, delta: 3 }]);
    expect(drive(new HpaStabilizer(up), [2, 1, 3, 0, 3], 4)).toEqual([{ tick: 2, delta: 1 }]);
  });
});
