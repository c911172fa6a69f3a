import { describe, expect, it } from 'vitest';
import { GoRand } from '../../gocompat/go-rand.js';
import {
  ConstantArrivalSampler,
  GammaSampler,
  PoissonSampler,
  WeibullSampler,
  newArrivalSampler,
  weibullCv,
  weibullShapeFromCv,
} from './arrival.js';
import type { ArrivalSampler } from './arrival.js';
import { goGamma } from '../../gocompat/go-math-special.js';
import type { ArrivalSpec } from './types.js';

const spec = (process: string, extra: Partial<ArrivalSpec> = {}): ArrivalSpec => ({ process, cv: null, shape: null, scale: null, ...extra });

function draws(s: ArrivalSampler, n: number, seed = 42n): number[] {
  const rng = new GoRand(seed);
  return Array.from({ length: n }, () => s.sampleIat(rng));
}

function stats(xs: readonly number[]): { mean: number; cv: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1);
  return { mean, cv: Math.sqrt(variance) / mean };
}

// Recorded from the reference's NewArrivalSampler with rand.New(rand.NewSource(42)); rates in requests/s.
const GOLDEN: [string, ArrivalSpec, number, number[]][] = [
  ['poisson', spec('poisson'), 10, [49573, 13054, 15323, 33844, 11596, 105565, 85901, 14863]],
  ['gamma cv 2 (shape < 1)', spec('gamma', { cv: 2 }), 10, [8069, 797, 290133, 10134, 8822, 11371, 269518, 7091]],
  ['gamma cv 0.5', spec('gamma', { cv: 0.5 }), 10, [187969, 69978, 98130, 64855, 188889, 41929, 166335, 63974]],
  ['gamma cv 1.5', spec('gamma', { cv: 1.5 }), 7, [43638, 11901, 386335, 26523, 49454, 43877, 293459, 44156]],
  ['gamma explicit', spec('gamma', { shape: 0.7, scale: 150000 }), 10, [55677, 24441, 250228, 26714, 63568, 49042, 178047, 59559]],
  ['weibull cv 1.7', spec('weibull', { cv: 1.7 }), 10, [67282, 348230, 22662, 142468, 437227, 64333, 5361, 63978]],
  ['weibull default cv', spec('weibull'), 3, [328609, 906361, 167890, 522104, 1043039, 319644, 68971, 318556]],
  ['weibull explicit', spec('weibull', { shape: 0.6, scale: 90000 }), 10, [87924, 476448, 28729, 190120, 602029, 83965, 6528, 83490]],
  ['constant', spec('constant'), 3, [333333, 333333, 333333, 333333, 333333, 333333, 333333, 333333]],
  [
    'poisson at the rate floor',
    spec('poisson'),
    0,
    [495738414902397, 130547183758962, 153233452209075, 338446362609448, 115964238794041, 1055658939552480, 859015229026155, 148633681080763],
  ],
];

describe('arrival samplers reproduce the reference draw for draw', () => {
  for (const [name, s, ratePerSec, want] of GOLDEN) {
    it(name, () => {
      expect(draws(newArrivalSampler(s, ratePerSec / 1e6), want.length)).toEqual(want);
    });
  }

  it('picks the reference sampler for each configuration', () => {
    expect(newArrivalSampler(spec('poisson'), 1e-5)).toBeInstanceOf(PoissonSampler);
    expect(newArrivalSampler(spec('gamma', { cv: 12 }), 1e-5)).toBeInstanceOf(PoissonSampler); // shape 1/144 < 0.01
    expect(newArrivalSampler(spec('gamma', { cv: 9 }), 1e-5)).toBeInstanceOf(GammaSampler);
    expect(newArrivalSampler(spec('gamma', { shape: -1, scale: 5, cv: 2 }), 1e-5)).toMatchObject({ shape: 0.25 });
    expect(newArrivalSampler(spec('weibull', { shape: 2, scale: 10 }), 1e-5)).toMatchObject({ shape: 2, scale: 10 });
    expect(newArrivalSampler(spec('mystery'), 1e-5)).toBeInstanceOf(PoissonSampler);
    // 10 req/s is 1e-5 req/µs, whose reciprocal is 99999.99999999999 µs: the gap truncates to 99999.
    expect(newArrivalSampler(spec('constant'), 10 / 1e6)).toEqual(new ConstantArrivalSampler(99999));
    expect(newArrivalSampler(spec('constant'), 5)).toEqual(new ConstantArrivalSampler(1));
  });
});

describe('arrival sampler statistics (mean gap 100 ms)', () => {
  const rate = 1e-5; // requests per µs
  const cases: [string, ArrivalSpec, number][] = [
    ['poisson', spec('poisson'), 1],
    ['gamma cv 0.5', spec('gamma', { cv: 0.5 }), 0.5],
    ['gamma cv 1.5', spec('gamma', { cv: 1.5 }), 1.5],
    ['gamma cv 3 (shape < 1 boost)', spec('gamma', { cv: 3 }), 3],
    ['weibull cv 0.5', spec('weibull', { cv: 0.5 }), 0.5],
    ['weibull cv 1.7', spec('weibull', { cv: 1.7 }), 1.7],
  ];
  for (const [name, s, cv] of cases) {
    it(`${name}: mean 1/rate and the requested CV`, () => {
      const st = stats(draws(newArrivalSampler(s, rate), 200_000, 7n));
      expect(Math.abs(st.mean / 1e5 - 1)).toBeLessThan(0.025);
      expect(Math.abs(st.cv / cv - 1)).toBeLessThan(0.05);
    });
  }

  it('poisson gaps pass a Kolmogorov-Smirnov test against the exponential distribution', () => {
    const xs = draws(newArrivalSampler(spec('poisson'), rate), 20_000, 11n).sort((a, b) => a - b);
    let d = 0;
    // A gap of k µs is an exponential draw in [k, k+1): the discrete CDF just below and at k.
    xs.forEach((x, i) => {
      const below = 1 - Math.exp(-x * rate);
      const at = 1 - Math.exp(-(x + 1) * rate);
      d = Math.max(d, Math.abs(below - i / xs.length), Math.abs(at - (i + 1) / xs.length));
    });
    // Critical value at the 0.1 % level (0.014 here); a 10 % error in the mean gives D ≈ 0.033.
    expect(d).toBeLessThan(1.95 / Math.sqrt(xs.length));
  });

  it('explicit shape and scale set the mean regardless of the rate', () => {
    const g = stats(draws(new GammaSampler(2, 30_000), 100_000, 3n));
    expect(Math.abs(g.mean / 60_000 - 1)).toBeLessThan(0.02);
    expect(Math.abs(g.cv / Math.SQRT1_2 - 1)).toBeLessThan(0.03);
    const w = stats(draws(new WeibullSampler(0.8, 50_000), 100_000, 3n));
    expect(Math.abs(w.mean / (50_000 * goGamma(1 + 1 / 0.8)) - 1)).toBeLessThan(0.02);
  });

  it('gaps are at least 1 µs even when the rate is huge', () => {
    expect(Math.min(...draws(newArrivalSampler(spec('gamma', { cv: 2 }), 10), 5000))).toBe(1);
    expect(Math.min(...draws(newArrivalSampler(spec('weibull', { cv: 3 }), 10), 5000))).toBe(1);
  });

  it('the Weibull shape search hits the requested CV', () => {
    for (const cv of [0.05, 0.3, 1, 1.7, 4, 10]) {
      expect(Math.abs(weibullCv(weibullShapeFromCv(cv)) - cv)).toBeLessThan(0.001);
    }
    expect(weibullShapeFromCv(1)).toBeCloseTo(1, 2);
  });
});
