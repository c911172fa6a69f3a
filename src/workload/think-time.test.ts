import { describe, expect, it } from 'vitest';
import { GoRand } from '../gocompat/go-rand.js';
import { parseThinkTimeDist, ThinkTimeError } from './think-time.js';

const draw = (spec: string, n = 5): number[] => {
  const s = parseThinkTimeDist(spec);
  const rng = new GoRand(7n);
  return Array.from({ length: n }, () => s.sample(rng));
};

describe('--think-time-dist strings', () => {
  it('reads constant times with us/ms/s suffixes, a bare number as ms, and floors 0 at 1 µs', () => {
    expect(draw('constant:value=500ms', 1)).toEqual([500_000]);
    expect(draw('constant:value=2s', 1)).toEqual([2_000_000]);
    expect(draw('constant:value=7us', 1)).toEqual([7]);
    expect(draw('constant:value=1.5', 1)).toEqual([1_500]);
    expect(draw('constant:value=0', 1)).toEqual([1]);
    expect(draw('constant: value=3ms ,', 1)).toEqual([3_000]);
  });

  it('draws lognormal think times in µs from log-second parameters, clamped to [min, max]', () => {
    // sigma ~ 0: every draw is e^(mu + ln 1e6) = 1e6 · e^mu µs.
    expect(draw('lognormal:mu=0,sigma=1e-12')).toEqual([1e6, 1e6, 1e6, 1e6, 1e6]);
    expect(draw('lognormal:mu=1,sigma=1e-12', 1)).toEqual([Math.round(Math.E * 1e6)]);
    expect(draw('lognormal:mu=2.0,sigma=0.6,min=3s,max=3s')).toEqual([3e6, 3e6, 3e6, 3e6, 3e6]);
    const spread = draw('lognormal:mu=0,sigma=1,min=500ms,max=2s', 200);
    expect(Math.min(...spread)).toBe(500_000);
    expect(Math.max(...spread)).toBe(2_000_000);
  });

  it.each([
    ['lognormal', /missing "type:" prefix/],
    ['lognormal:sigma=1', /requires parameter "mu"/],
    ['lognormal:mu=1', /requires parameter "sigma"/],
    ['lognormal:mu=x,sigma=1', /invalid mu "x"/],
    ['lognormal:mu=1,sigma=0', /sigma must be a finite positive number/],
    ['lognormal:mu=inf,sigma=1', /mu must be a finite number/],
    ['lognormal:mu=1,sigma=1,min=5s,max=1s', /min \(5000000 µs\) must be <= max \(1000000 µs\)/],
    ['constant:value=-1', /non-negative finite time/],
    ['constant:value=1,value=2', /duplicate key "value"/],
    ['constant:v', /expected key=value/],
    ['gamma:shape=1', /unsupported type "gamma"/],
    ['constant:value=1e30s', /too large/],
  ])('refuses %s with one clear error', (spec, msg) => {
    let err: unknown;
    try {
      parseThinkTimeDist(spec);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ThinkTimeError);
    expect((err as Error).message).toMatch(msg);
    expect((err as Error).message).toContain('--think-time-dist');
    expect((err as Error).message).toContain('expected lognormal:');
  });
});
