/**
 * The profile math: Λ and Λ⁻¹ agree with each other and with a numeric integral of m(t), for every segment
 * kind; warping with factor pieces scales time as documented.
 */
import { describe, expect, it } from 'vitest';
import { GoRand } from '../../gocompat/go-rand.js';
import { OnOffSchedule } from './misbehavior.js';
import { RateProfile } from './profile.js';
import type { LoadProfileSpec, LoadSegment } from './types.js';
import { seg } from '../../../test/fixtures/workload-profiles.js';
import { ConstantFactor, TimeWarp, toTick } from './warp.js';

const profile = (segments: LoadSegment[], defaultMultiplier = 1): LoadProfileSpec => ({ defaultMultiplier, segments });

/** Midpoint-rule integral of m over [0, t] (µs), fine enough to check the closed forms. */
function numericIntegral(p: RateProfile, t: number, steps = 200_000): number {
  const h = t / steps;
  let sum = 0;
  for (let i = 0; i < steps; i++) sum += p.multiplierAt((i + 0.5) * h) * h;
  return sum;
}

const ALL_KINDS = profile([
  seg(0, 10, 'constant', { multiplier: 2 }),
  seg(10, 20, 'step', { levels: [0.5, 3, 1] }),
  seg(25, 40, 'ramp', { from: 0, to: 4 }),
  seg(40, 55, 'ramp', { from: 3, to: 1 }),
  seg(60, 100, 'diurnal', { periodS: 20, peakAtS: 5, peak: 3, trough: 0.5 }),
  seg(100, 130, 'spike', { atS: 105, durationS: 10, peak: 8, base: 0.5, decayS: 3 }),
  seg(130, 140, 'spike', { peak: 6 }),
]);

describe('RateProfile', () => {
  const p = new RateProfile(ALL_KINDS);

  it('takes each kind\'s multiplier where documented', () => {
    expect(p.multiplierAt(5e6)).toBe(2);
    expect(p.multiplierAt(12e6)).toBe(0.5);
    expect(p.multiplierAt(15e6)).toBe(3);
    expect(p.multiplierAt(19e6)).toBe(1);
    expect(p.multiplierAt(22e6)).toBe(1); // gap: default multiplier
    expect(p.multiplierAt(32.5e6)).toBeCloseTo(2, 12);
    expect(p.multiplierAt(65e6)).toBeCloseTo(3, 12); // a peak (peak_at 5 s + 3 periods)
    expect(p.multiplierAt(75e6)).toBeCloseTo(0.5, 12); // half a period later: the trough
    expect(p.multiplierAt(102e6)).toBe(0.5);
    expect(p.multiplierAt(105e6)).toBeCloseTo(8, 12);
    expect(p.multiplierAt(108e6)).toBeCloseTo(0.5 + 7.5 * Math.exp(-1), 12);
    expect(p.multiplierAt(116e6)).toBe(0.5);
    expect(p.multiplierAt(135e6)).toBe(6);
    expect(p.multiplierAt(500e6)).toBe(1);
  });

  it('Λ matches a numeric integral of m(t) for every kind', () => {
    for (const t of [7e6, 18e6, 30e6, 50e6, 83e6, 109e6, 125e6, 150e6]) {
      // Midpoint rule: exact on linear pieces, ~1e-5 relative at the step discontinuities.
      expect(p.cumulative(t) / numericIntegral(p, t)).toBeCloseTo(1, 4);
    }
  });

  it('Λ⁻¹ inverts Λ to well under a microsecond', () => {
    for (let t = 1; t < 160e6; t += 1_234_567) {
      expect(Math.abs(p.inverse(p.cumulative(t)) - t)).toBeLessThan(1e-3);
    }
  });

  it('skips zero-multiplier stretches and ends with a zero tail', () => {
    const z = new RateProfile(profile([seg(10, 20, 'constant', { multiplier: 0 }), seg(20, 30, 'constant', { multiplier: 1 })], 0));
    expect(z.cumulative(10e6)).toBe(0);
    expect(z.inverse(1)).toBeCloseTo(20e6 + 1, 6);
    expect(z.cumulative(Number.POSITIVE_INFINITY)).toBe(10e6);
    expect(z.inverse(10e6 + 1)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('TimeWarp', () => {
  it('is the identity with no profile and factor 1, and maps integer τ back to itself', () => {
    const w = new TimeWarp(null, new ConstantFactor(1));
    for (const tau of [1, 2, 1000, 123_456_789]) expect(toTick(w.realTime(tau))).toBe(tau);
    const flat = new TimeWarp(new RateProfile(profile([seg(0, 100, 'constant', { multiplier: 1 })])), new ConstantFactor(1));
    for (const tau of [1, 2, 1000, 99_999_999, 200_000_000]) expect(toTick(flat.realTime(tau))).toBe(tau);
  });

  it('a constant factor c compresses time by c', () => {
    const w = new TimeWarp(null, new ConstantFactor(4));
    expect(w.realTime(4e6)).toBe(1e6);
    const z = new TimeWarp(null, new ConstantFactor(0));
    expect(z.realTime(1)).toBe(Number.POSITIVE_INFINITY);
  });

  it('an on/off schedule passes operational time only while on, at the on factor', () => {
    const params = { onFactor: 2, offFactor: 0, meanOnUs: 1e6, meanOffUs: 3e6, alpha: 2.5 };
    const pieces = new OnOffSchedule(new GoRand(9n), params);
    const list = Array.from({ length: 60 }, () => pieces.next());
    const w = new TimeWarp(null, new OnOffSchedule(new GoRand(9n), params));
    let before = 0;
    let checked = 0;
    for (const q of list) {
      const len = q.end - q.start;
      if (q.factor > 0) {
        // Half-way through this piece's operational length lands half-way through the piece in real time.
        expect(w.realTime(before + (q.factor * len) / 2)).toBeCloseTo(q.start + len / 2, 3);
        checked++;
      }
      before += q.factor * len;
    }
    expect(checked).toBeGreaterThan(20);
  });
});
