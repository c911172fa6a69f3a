import { describe, expect, it } from 'vitest';
import { GoRand } from '../../gocompat/go-rand.js';
import { DistributionError, EmpiricalSampler, newLengthSampler, parseEmpiricalKey } from './length.js';
import type { LengthSampler } from './length.js';
import type { DistSpec } from './types.js';

const dist = (type: string, params: Record<string, number> = {}): DistSpec => ({ type, params: new Map(Object.entries(params)), file: '' });

function draws(s: LengthSampler, n: number, seed = 7n): number[] {
  const rng = new GoRand(seed);
  return Array.from({ length: n }, () => s.sample(rng));
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

function sd(xs: readonly number[]): number {
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
}

function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(q * (s.length - 1))]!;
}

// Recorded from the reference's NewLengthSampler with rand.New(rand.NewSource(7)).
const GOLDEN: [string, DistSpec, number[]][] = [
  ['gaussian', dist('gaussian', { mean: 256, std_dev: 100, min: 2, max: 800 }), [232, 347, 349, 195, 217, 321, 519, 373, 267, 73]],
  ['exponential', dist('exponential', { mean: 120 }), [100, 97, 36, 181, 150, 71, 71, 122, 4, 125]],
  ['exponential with bounds', dist('exponential', { mean: 120, min: 50, max: 150 }), [100, 97, 50, 150, 150, 71, 71, 122, 50, 125]],
  ['lognormal', dist('lognormal', { mu: 5.5, sigma: 0.6 }), [212, 423, 427, 170, 193, 361, 1186, 492, 261, 82]],
  [
    'pareto_lognormal',
    dist('pareto_lognormal', { alpha: 1.5, xm: 40, mu: 5, sigma: 0.5, mix_weight: 0.4 }),
    [234, 43, 205, 82, 53, 230, 45, 125, 116, 170],
  ],
  ['empirical', dist('empirical', { '64': 0.5, '128': 0.3, '512': 0.2, '9': 0 }), [512, 64, 64, 512, 128, 64, 64, 64, 64, 128]],
  ['constant', dist('constant', { value: 77 }), [77, 77, 77, 77, 77, 77, 77, 77, 77, 77]],
];

describe('length samplers reproduce the reference draw for draw', () => {
  for (const [name, d, want] of GOLDEN) {
    it(name, () => {
      expect(draws(newLengthSampler(d), want.length)).toEqual(want);
    });
  }

  it('draw-free cases leave the RNG untouched', () => {
    const rng = new GoRand(3n);
    const fresh = new GoRand(3n);
    newLengthSampler(dist('gaussian', { mean: 5, std_dev: 9, min: 40, max: 40 })).sample(rng);
    newLengthSampler(dist('empirical', { '12': 1 })).sample(rng);
    newLengthSampler(dist('empirical', { '12': 0, '13': 0 })).sample(rng);
    newLengthSampler(dist('constant', { value: 3 })).sample(rng);
    expect(rng.int63()).toBe(fresh.int63());
  });
});

describe('length sampler statistics', () => {
  it('gaussian: mean and standard deviation inside wide bounds; clamping at the bounds', () => {
    const xs = draws(newLengthSampler(dist('gaussian', { mean: 500, std_dev: 80, min: 1, max: 5000 })), 100_000);
    expect(Math.abs(mean(xs) - 500)).toBeLessThan(1.5);
    expect(Math.abs(sd(xs) / 80 - 1)).toBeLessThan(0.02);
    const clamped = draws(newLengthSampler(dist('gaussian', { mean: 500, std_dev: 80, min: 450, max: 600 })), 100_000);
    // P(N < 450) = Φ(-0.625) ≈ 0.266 and P(N > 600) = Φ(-1.25) ≈ 0.106 (rounding adds half a token either side).
    expect(Math.abs(clamped.filter((x) => x === 450).length / 1e5 - 0.268)).toBeLessThan(0.01);
    expect(Math.abs(clamped.filter((x) => x === 600).length / 1e5 - 0.107)).toBeLessThan(0.01);
  });

  it('exponential: mean and coefficient of variation 1; bounds clamp', () => {
    const xs = draws(newLengthSampler(dist('exponential', { mean: 300 })), 100_000);
    expect(Math.abs(mean(xs) / 300 - 1)).toBeLessThan(0.015);
    expect(Math.abs(sd(xs) / mean(xs) - 1)).toBeLessThan(0.02);
    expect(Math.abs(quantile(xs, 0.5) / (300 * Math.LN2) - 1)).toBeLessThan(0.02);
    const b = draws(newLengthSampler(dist('exponential', { mean: 300, min: 100, max: 400 })), 20_000);
    expect(Math.min(...b)).toBe(100);
    expect(Math.max(...b)).toBe(400);
  });

  it('lognormal: median e^mu and mean e^(mu + sigma²/2)', () => {
    const xs = draws(newLengthSampler(dist('lognormal', { mu: 5, sigma: 0.5 })), 100_000);
    expect(Math.abs(quantile(xs, 0.5) / Math.exp(5) - 1)).toBeLessThan(0.02);
    expect(Math.abs(mean(xs) / Math.exp(5.125) - 1)).toBeLessThan(0.015);
  });

  it('pareto_lognormal: the Pareto share has the power-law tail, the rest is lognormal', () => {
    const pareto = draws(newLengthSampler(dist('pareto_lognormal', { alpha: 2, xm: 50, mu: 3, sigma: 0.1, mix_weight: 1 })), 100_000);
    expect(Math.min(...pareto)).toBe(50);
    // P(X > 2 xm) = 2^-alpha = 0.25 and P(X > 4 xm) = 0.0625.
    expect(Math.abs(pareto.filter((x) => x > 100).length / 1e5 - 0.25)).toBeLessThan(0.01);
    expect(Math.abs(pareto.filter((x) => x > 200).length / 1e5 - 0.0625)).toBeLessThan(0.005);
    const mixed = draws(newLengthSampler(dist('pareto_lognormal', { alpha: 2, xm: 1000, mu: 3, sigma: 0.1, mix_weight: 0.3 })), 100_000);
    expect(Math.abs(mixed.filter((x) => x >= 1000).length / 1e5 - 0.3)).toBeLessThan(0.01);
  });

  it('empirical: bin frequencies follow the normalised weights; zero-weight bins never appear', () => {
    const xs = draws(newLengthSampler(dist('empirical', { '10': 2, '20': 1, '30': 1, '40': 0 })), 100_000);
    const f = (v: number): number => xs.filter((x) => x === v).length / xs.length;
    expect(Math.abs(f(10) - 0.5)).toBeLessThan(0.01);
    expect(Math.abs(f(20) - 0.25)).toBeLessThan(0.01);
    expect(Math.abs(f(30) - 0.25)).toBeLessThan(0.01);
    expect(f(40)).toBe(0);
  });

  it('empirical: negative weights distort the reference normalisation (so the spec parser rejects them)', () => {
    // Total weight 1 (negatives included) gives the CDF [2, 3, 1]; the binary search then always lands on bin 10.
    const s = new EmpiricalSampler(new Map([[10, 2], [20, 1], [30, 1], [50, -3]]));
    expect(s.cdf).toEqual([2, 3, 1]);
    expect(new Set(draws(s, 1000))).toEqual(new Set([10]));
  });

  it('constant: the value, floored at 1', () => {
    expect(draws(newLengthSampler(dist('constant', { value: 12.9 })), 3)).toEqual([12, 12, 12]);
    expect(draws(newLengthSampler(dist('constant', { value: -4 })), 2)).toEqual([1, 1]);
  });
});

describe('length sampler construction errors', () => {
  const bad: [string, DistSpec, string, string | null][] = [
    ['gaussian without max', dist('gaussian', { mean: 1, std_dev: 1, min: 1 }), 'requires parameter "max"', 'max'],
    ['exponential without mean', dist('exponential'), 'requires parameter "mean"', 'mean'],
    ['lognormal min > max', dist('lognormal', { mu: 1, sigma: 1, min: 9, max: 3 }), 'min (9) must be <= max (3)', 'min'],
    ['exponential min > max', dist('exponential', { mean: 1, min: 9, max: 3 }), 'min (9) must be <= max (3)', 'min'],
    ['empirical with no bins', dist('empirical'), 'requires a file path or inline params', null],
    ['empirical with a non-integer key', dist('empirical', { abc: 1 }), 'not an integer', 'abc'],
    ['empirical with colliding keys', dist('empirical', { '12': 1, '12.5': 1 }), 'collide', '12.5'],
    ['empirical with a negative weight', dist('empirical', { '12': 1, '13': -0.5 }), 'negative', '13'],
    ['unknown type', dist('zipf'), 'unknown distribution type "zipf"', null],
  ];
  for (const [name, d, msg, param] of bad) {
    it(name, () => {
      let err: unknown;
      try {
        newLengthSampler(d);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(DistributionError);
      expect((err as DistributionError).message).toContain(msg);
      expect((err as DistributionError).param).toBe(param);
    });
  }

  it('reads empirical keys like fmt.Sscanf("%d")', () => {
    expect(parseEmpiricalKey('128')).toBe(128);
    expect(parseEmpiricalKey(' +12')).toBe(12);
    expect(parseEmpiricalKey('-3')).toBe(-3);
    expect(parseEmpiricalKey('12.5')).toBe(12);
    expect(parseEmpiricalKey('1e3')).toBe(1);
    expect(parseEmpiricalKey('0x10')).toBe(0);
    expect(parseEmpiricalKey('abc')).toBeNull();
  });
});
