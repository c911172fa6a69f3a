import { describe, expect, it } from 'vitest';
import { binnedCdf, cdfAt, CDF_PROBABILITIES, weightedCdf } from './cdf.js';

describe('binned CDFs', () => {
  it('lists 0..1 in half-percent steps plus the 99.x tail, sorted and unique', () => {
    expect(CDF_PROBABILITIES[0]).toBe(0);
    expect(CDF_PROBABILITIES[CDF_PROBABILITIES.length - 1]).toBe(1);
    expect(CDF_PROBABILITIES).toContain(0.5);
    expect(CDF_PROBABILITIES).toContain(0.995);
    expect(CDF_PROBABILITIES).toContain(0.999);
    expect(CDF_PROBABILITIES.length).toBe(201 + 8);
    for (let i = 1; i < CDF_PROBABILITIES.length; i++) expect(CDF_PROBABILITIES[i]).toBeGreaterThan(CDF_PROBABILITIES[i - 1] as number);
  });

  it('nearest rank on 1..100: p50 = 50, p99 = 99, p0 = min, p100 = max; scaled', () => {
    const vs = Array.from({ length: 100 }, (_, i) => 100 - i);
    const c = binnedCdf(vs, 10);
    expect(c?.count).toBe(100);
    expect(c?.mean).toBe(505);
    expect(cdfAt(c!, 0)).toBe(10);
    expect(cdfAt(c!, 0.5)).toBe(500);
    expect(cdfAt(c!, 0.99)).toBe(990);
    expect(cdfAt(c!, 1)).toBe(1000);
    expect(binnedCdf([])).toBeNull();
  });

  it('weighted values equal the expanded multiset', () => {
    const values = [5, 1, 3, 2];
    const weights = [1, 3, 0, 6];
    const expanded = [5, 1, 1, 1, 2, 2, 2, 2, 2, 2];
    expect(weightedCdf(values, weights)).toEqual(binnedCdf(expanded));
    expect(weightedCdf([1, 2], [0, 0])).toBeNull();
  });
});
