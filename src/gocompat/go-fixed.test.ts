import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { goFixed } from './go-fixed.js';

/** Go's %.Nf by the exact probe only (what goFixed did for every value before its quick path). */
function exact(x: number, digits: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  const abs = Math.abs(x);
  const wide = abs.toFixed(digits + 25);
  const cut = wide.length - 25;
  if (/^50*$/.test(wide.slice(cut))) {
    const kept = wide.slice(0, cut).replace(/\.$/, '');
    if ((kept.charCodeAt(kept.length - 1) - 48) % 2 === 0) return sign + kept;
  }
  return sign + abs.toFixed(digits);
}

describe('goFixed', () => {
  it('rounds exact binary ties half to even, as Go does', () => {
    expect(goFixed(0.8125, 3)).toBe('0.812');
    expect(goFixed(0.8135, 3)).toBe(exact(0.8135, 3));
    expect(goFixed(2.5, 0)).toBe('2');
    expect(goFixed(3.5, 0)).toBe('4');
    expect(goFixed(-0.125, 2)).toBe('-0.12');
    expect(goFixed(-0, 2)).toBe('-0.00');
    expect(goFixed(1.005, 2)).toBe('1.00'); // 1.005 is below the tie in binary
    expect(goFixed(Number.NaN, 2)).toBe('NaN');
    expect(goFixed(-Infinity, 2)).toBe('-Inf');
  });

  it('agrees with the exact probe everywhere: random doubles, dyadic ties and their neighbours', () => {
    const digits = fc.integer({ min: 0, max: 8 });
    const ties = fc.tuple(fc.integer({ min: -1_000_000, max: 1_000_000 }), fc.integer({ min: 1, max: 12 })).map(([k, e]) => (2 * k + 1) / 2 ** e);
    const value = fc.oneof(fc.double({ noNaN: true }), fc.double({ min: -1e6, max: 1e6, noNaN: true }), ties, ties.map((t) => t * (1 + Number.EPSILON)), ties.map((t) => t * (1 - Number.EPSILON)));
    fc.assert(fc.property(value, digits, (x, d) => goFixed(x, d) === exact(x, d)), { numRuns: 20_000 });
  });
});
