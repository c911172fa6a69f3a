import { describe, expect, it } from 'vitest';
import { stepBatchOf, type LatencyModel } from './types.js';
import { warmupFactor, withWarmup } from './warmup.js';

const base: LatencyModel = { name: 'flat', stepTime: () => 1000, queueingTime: () => 5, outputTokenProcessingTime: () => 2, postDecodeFixedOverhead: () => 7 };

describe('warm-up penalty curves', () => {
  const p = { durationUs: 1000, initialFactor: 2 };
  it('linear falls from the initial factor to 1 in a straight line', () => {
    expect(warmupFactor({ ...p, curve: 'linear' }, 0)).toBe(2);
    expect(warmupFactor({ ...p, curve: 'linear' }, 250)).toBe(1.75);
    expect(warmupFactor({ ...p, curve: 'linear' }, 500)).toBe(1.5);
    expect(warmupFactor({ ...p, curve: 'linear' }, 1000)).toBe(1);
  });
  it('exponential recovers faster early: e^-5x of the excess', () => {
    expect(warmupFactor({ ...p, curve: 'exponential' }, 0)).toBe(2);
    expect(warmupFactor({ ...p, curve: 'exponential' }, 200)).toBeCloseTo(1 + Math.exp(-1), 12);
    expect(warmupFactor({ ...p, curve: 'exponential' }, 200)).toBeLessThan(warmupFactor({ ...p, curve: 'linear' }, 200));
    expect(warmupFactor({ ...p, curve: 'exponential' }, 1000)).toBe(1);
  });
  it('step keeps the full penalty to the end', () => {
    expect(warmupFactor({ ...p, curve: 'step' }, 999)).toBe(2);
    expect(warmupFactor({ ...p, curve: 'step' }, 1000)).toBe(1);
  });
  it('penalises step times only, from the warm-up start on the replica clock', () => {
    let clock = 0;
    const state = { startUs: -1 };
    const m = withWarmup(base, { curve: 'linear', durationUs: 1000, initialFactor: 2 }, state, () => clock);
    expect(m.stepTime(stepBatchOf([]))).toBe(1000);
    state.startUs = 100;
    clock = 100;
    expect(m.stepTime(stepBatchOf([]))).toBe(2000);
    clock = 600;
    expect(m.stepTime(stepBatchOf([]))).toBe(1500);
    clock = 1100;
    expect(m.stepTime(stepBatchOf([]))).toBe(1000);
    expect([m.queueingTime(null as never), m.outputTokenProcessingTime(), m.postDecodeFixedOverhead()]).toEqual([5, 2, 7]);
  });
});
