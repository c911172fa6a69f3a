import { describe, expect, it } from 'vitest';
import { percentilesMs, weightedMeanMs, weightedPercentilesMs } from './stats.js';

/** The multiset expanded: every value repeated `count` times. */
function expand(values: Float64Array, counts: Float64Array): Float64Array {
  const out: number[] = [];
  values.forEach((v, i) => {
    for (let k = 0; k < (counts[i] as number); k++) out.push(v);
  });
  return Float64Array.from(out);
}

describe('weightedPercentilesMs', () => {
  let x = 99;
  const next = (): number => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x;
  };
  const PS = [0, 1, 50, 90, 95, 99, 99.9, 100];

  it('equals the percentiles of the expanded multiset for integer values (packed sort), ties and zero counts included', () => {
    for (let round = 0; round < 30; round++) {
      const m = 1 + (next() % 400);
      const values = Float64Array.from({ length: m }, () => next() % (round % 2 === 0 ? 50 : 4_000_000));
      const counts = Float64Array.from({ length: m }, () => next() % 5);
      const all = expand(values, counts);
      expect(weightedPercentilesMs(values, counts, PS)).toEqual(percentilesMs(all, PS));
      expect(weightedMeanMs(values, counts)).toBe(all.length === 0 ? 0 : all.reduce((a, b) => a + b, 0) / all.length / 1000);
    }
  });

  it('takes the general path for fractional values and large counts, with the same results', () => {
    const values = Float64Array.from([12.5, 3, 7.25, 3, 1e10]);
    const counts = Float64Array.from([2, 1, 3, 0, 1]);
    expect(weightedPercentilesMs(values, counts, PS)).toEqual(percentilesMs(expand(values, counts), PS));
    const big = Float64Array.from([5, 9]);
    const many = Float64Array.from([2 ** 21, 1]);
    const r = weightedPercentilesMs(big, many, [50, 100]);
    expect(r).toEqual([0.005, 0.009]);
  });

  it('counts instead of sorting when the values span little more than the pairs, with the same results', () => {
    // [pairs, span]: inside the kept buckets (65,536; reused, smaller spans after larger), past them but within
    // 8 × pairs, and just past the limit.
    const cases: [number, number][] = [[2000, 50], [3000, 20_000], [2500, 65_536], [4000, 30_000], [1500, 700], [10_000, 70_000], [10_000, 80_000], [3000, 65_537], [10_000, 80_001], [3000, 40_000]];
    for (const [m, span] of cases) {
      // Negative values included; the extremes are set so the span is exact.
      const values = Float64Array.from({ length: m }, () => (next() % span) - 3000);
      values[0] = -3000;
      values[1] = span - 3001;
      const counts = Float64Array.from({ length: m }, () => next() % 8);
      expect(weightedPercentilesMs(values, counts, PS)).toEqual(percentilesMs(expand(values, counts), PS));
    }
  });

  it('is all zeros for an empty multiset', () => {
    expect(weightedPercentilesMs(new Float64Array(3), new Float64Array(3), [50, 99])).toEqual([0, 0]);
  });
});
