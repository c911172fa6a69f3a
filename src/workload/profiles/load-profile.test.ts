/**
 * `load_profile:` end to end through the spec generator, over large seeded samples: arrival counts per stretch
 * follow the multipliers (within Poisson noise), time-warping keeps every random draw (only instants move), and
 * a neutral profile changes nothing at all.
 */
import { describe, expect, it } from 'vitest';
import { clientYaml, countIn, generate, requestView, specYaml, withinPoisson } from '../../../test/fixtures/workload-profiles.js';

const RATE = 20; // requests/second for the single client

function oneClient(profile: string, horizonS: number, arrival = 'poisson'): ReturnType<typeof generate> {
  return generate(specYaml({ rate: RATE, top: profile, clients: [clientYaml('a', '', arrival)] }), horizonS * 1e6);
}

function expectCounts(reqs: ReturnType<typeof generate>, bins: readonly [number, number, number][]): void {
  for (const [from, to, expected] of bins) {
    const got = countIn(reqs, from, to);
    expect(withinPoisson(got, expected), `[${from}, ${to}) s: ${got} arrivals, expected ${expected.toFixed(1)}`).toBe(true);
  }
}

describe('load_profile kinds: arrivals per stretch follow the multipliers', () => {
  it('constant segments, with a zero default after them', () => {
    const reqs = oneClient(
      `load_profile:
  default_multiplier: 0
  segments:
    - {start_s: 0, end_s: 100, kind: constant, multiplier: 1}
    - {start_s: 100, end_s: 200, kind: constant, multiplier: 3}
    - {start_s: 200, end_s: 300, kind: constant, multiplier: 0.5}
`,
      400,
    );
    expectCounts(reqs, [[0, 100, 2000], [100, 200, 6000], [200, 300, 1000]]);
    expect(countIn(reqs, 300, 400)).toBe(0);
  });

  it('step: equal-length levels', () => {
    const reqs = oneClient('load_profile:\n  segments:\n    - {start_s: 0, end_s: 400, kind: step, levels: [1, 4, 2, 0]}\n', 400);
    expectCounts(reqs, [[0, 100, 2000], [100, 200, 8000], [200, 300, 4000]]);
    expect(countIn(reqs, 300, 400)).toBe(0);
  });

  it('ramp: counts grow linearly across the segment', () => {
    const reqs = oneClient('load_profile:\n  segments:\n    - {start_s: 0, end_s: 400, kind: ramp, from: 0, to: 4}\n', 400);
    // m(t) = t/100; ∫ over the k-th 100 s quarter = 100·(k + 0.5).
    expectCounts(reqs, [[0, 100, 1000], [100, 200, 3000], [200, 300, 5000], [300, 400, 7000]]);
    // A flat (profile-ignoring) or thinned-at-the-ends implementation fails this finer check too.
    expectCounts(reqs, [[0, 20, 40], [380, 400, 1560]]);
  });

  it('diurnal: cosine between trough and peak, phase-aligned across cycles', () => {
    const peak = 3;
    const trough = 0.5;
    const reqs = oneClient(
      `load_profile:\n  segments:\n    - {start_s: 0, end_s: 1000, kind: diurnal, period_s: 100, peak_at_s: 25, peak: ${peak}, trough: ${trough}}\n`,
      1000,
    );
    // Ten phase bins of 10 s folded over the 10 cycles; expected = rate × ∫ m over the bin × 10.
    const omega = (2 * Math.PI) / 100;
    const integral = (t: number): number => ((peak + trough) / 2) * t + ((peak - trough) / 2 / omega) * Math.sin(omega * (t - 25));
    const folded = new Array<number>(10).fill(0);
    for (const r of reqs) folded[Math.floor(((r.arrivalTime / 1e6) % 100) / 10)]! += 1;
    folded.forEach((got, b) => {
      const expected = RATE * 10 * (integral((b + 1) * 10) - integral(b * 10));
      expect(withinPoisson(got, expected), `phase bin ${b}: ${got} vs ${expected.toFixed(1)}`).toBe(true);
    });
    // The bins around the peak (20-30 s) carry ~6x those around the trough (70-80 s).
    expect(folded[2]! / folded[7]!).toBeGreaterThan(4.5);
  });

  it('spike: flat-topped and decaying', () => {
    const flat = oneClient('load_profile:\n  segments:\n    - {start_s: 0, end_s: 300, kind: spike, at_s: 100, duration_s: 20, peak: 10}\n', 300);
    expectCounts(flat, [[0, 100, 2000], [100, 120, 4000], [120, 300, 3600]]);
    const decaying = oneClient(
      'load_profile:\n  segments:\n    - {start_s: 0, end_s: 300, kind: spike, at_s: 100, duration_s: 60, peak: 11, base: 1, decay_s: 10}\n',
      300,
    );
    // ∫ over [100, 160) of 1 + 10·e^(−u/10) = 60 + 100·(1 − e^(−6)).
    expectCounts(decaying, [[0, 100, 2000], [100, 160, RATE * (60 + 100 * (1 - Math.exp(-6)))], [160, 300, 2800]]);
    // Most of the decaying spike's excess arrives in its first 10 s (1 − e^(−1) of the excess).
    expectCounts(decaying, [[100, 110, RATE * (10 + 100 * (1 - Math.exp(-1)))]]);
  });
});

describe('time-warping semantics', () => {
  const plain = specYaml({ rate: RATE, clients: [clientYaml('a'), clientYaml('b', '', 'gamma', 2)] });

  it('a neutral profile generates exactly the requests of no profile (every field, every client)', () => {
    const neutral = specYaml({
      rate: RATE,
      top: 'load_profile:\n  segments:\n    - {start_s: 0, end_s: 50, kind: constant, multiplier: 1}\n    - {start_s: 60, end_s: 90, kind: step, levels: [1, 1]}\n',
      clients: [clientYaml('a'), clientYaml('b', '', 'gamma', 2)],
    });
    const a = generate(plain, 120e6).map(requestView);
    const b = generate(neutral, 120e6).map(requestView);
    expect(a.length).toBeGreaterThan(2000);
    expect(b).toEqual(a);
  });

  it('a profile moves arrival instants only: per client, tokens come in the same order', () => {
    const shaped = specYaml({
      rate: RATE,
      top: 'load_profile:\n  segments:\n    - {start_s: 0, end_s: 100, kind: ramp, from: 0.2, to: 5}\n',
      clients: [clientYaml('a'), clientYaml('b', '', 'gamma', 2)],
    });
    const tokensOf = (reqs: ReturnType<typeof generate>, id: string): number[][] =>
      reqs.filter((r) => r.clientId === id).map((r) => [...Array.from(r.inputTokens), ...Array.from(r.outputTokens)]);
    const a = generate(plain, 1000e6, 3000);
    const b = generate(shaped, 1000e6, 3000);
    for (const id of ['a', 'b']) {
      const ta = tokensOf(a, id);
      const tb = tokensOf(b, id);
      const n = Math.min(ta.length, tb.length);
      expect(n).toBeGreaterThan(500);
      expect(tb.slice(0, n)).toEqual(ta.slice(0, n));
    }
    expect(b.map((r) => r.arrivalTime)).not.toEqual(a.map((r) => r.arrivalTime));
  });

  it('keeps a constant process evenly spaced (gaps scale by 1/m instead of turning random)', () => {
    const reqs = oneClient('load_profile:\n  segments:\n    - {start_s: 10, end_s: 20, kind: constant, multiplier: 4}\n', 30, 'constant');
    const inside = reqs.filter((r) => r.arrivalTime > 10.1e6 && r.arrivalTime < 19.9e6).map((r) => r.arrivalTime);
    const gaps = inside.slice(1).map((t, i) => t - inside[i]!);
    // Base gap 49999 µs at 20 req/s; a quarter of it, give or take the µs rounding.
    for (const g of gaps) expect(Math.abs(g - 49_999 / 4)).toBeLessThanOrEqual(1);
    expect(gaps.length).toBeGreaterThan(700);
  });

  it('a client\'s own load_profile replaces the top-level one', () => {
    const yaml = specYaml({
      rate: RATE,
      top: 'load_profile:\n  segments:\n    - {start_s: 0, end_s: 100, kind: constant, multiplier: 3}\n',
      clients: [
        clientYaml('a'),
        clientYaml('b', '    load_profile:\n      segments:\n        - {start_s: 0, end_s: 100, kind: constant, multiplier: 0.5}'),
      ],
    });
    const reqs = generate(yaml, 100e6);
    // Each client has half the aggregate rate.
    expect(withinPoisson(countIn(reqs, 0, 100, 'a'), 10 * 3 * 100)).toBe(true);
    expect(withinPoisson(countIn(reqs, 0, 100, 'b'), 10 * 0.5 * 100)).toBe(true);
  });

  it('applies to cohort members and respects their lifecycle windows', () => {
    const yaml = `version: "2"
seed: 5
aggregate_rate: 40
load_profile:
  segments:
    - {start_s: 0, end_s: 3600, kind: constant, multiplier: 2}
cohorts:
  - id: c
    population: 4
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 5}}
    output_distribution: {type: constant, params: {value: 5}}
    spike: {start_time_us: 100000000, duration_us: 50000000}
`;
    const reqs = generate(yaml, 3600e6);
    expect(countIn(reqs, 0, 100)).toBe(0);
    expect(countIn(reqs, 150, 3600)).toBe(0);
    expect(withinPoisson(countIn(reqs, 100, 150), 40 * 2 * 50)).toBe(true);
  });

  it('is deterministic and seed-dependent', () => {
    const yaml = (seed: number): string =>
      specYaml({ rate: RATE, seed, top: 'load_profile:\n  segments:\n    - {start_s: 0, end_s: 60, kind: diurnal, period_s: 30, peak: 2, trough: 1}\n', clients: [clientYaml('a')] });
    expect(generate(yaml(3), 60e6).map(requestView)).toEqual(generate(yaml(3), 60e6).map(requestView));
    expect(generate(yaml(4), 60e6).map((r) => r.arrivalTime)).not.toEqual(generate(yaml(3), 60e6).map((r) => r.arrivalTime));
  });
});
