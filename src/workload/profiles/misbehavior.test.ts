/**
 * Misbehaving tenants over large seeded samples: bursty on/off periods (Pareto lengths, on fraction, in-burst
 * rate), abusive lengths and rapid fire, adversarial bursts coinciding across a group — and the other clients
 * left exactly as they were.
 */
import { describe, expect, it } from 'vitest';
import { GoRand } from '../../gocompat/go-rand.js';
import { PartitionedRng } from '../../engine/partitioned-rng.js';
import { clientYaml, countIn, generate, requestView, specYaml, withinPoisson } from '../../../test/fixtures/workload-profiles.js';
import { BurstStream, OnOffSchedule, burstInstant, paretoWithMean } from './misbehavior.js';

describe('bursty: on/off with Pareto periods', () => {
  it('Pareto draws have the requested mean and tail index', () => {
    const rng = new GoRand(3n);
    const alpha = 2.5;
    const mean = 4;
    const xs = Array.from({ length: 200_000 }, () => paretoWithMean(rng, mean, alpha));
    expect(xs.reduce((a, b) => a + b, 0) / xs.length).toBeCloseTo(mean, 1);
    const xm = (mean * (alpha - 1)) / alpha;
    expect(xs.reduce((a, b) => Math.min(a, b), Infinity)).toBeGreaterThanOrEqual(xm);
    // P(X > 2·xm) = 2^−α and P(X > 4·xm) = 4^−α.
    for (const k of [2, 4]) expect(xs.filter((x) => x > k * xm).length / xs.length).toBeCloseTo(k ** -alpha, 2);
  });

  it('the schedule alternates with the long-run on fraction mean_on / (mean_on + mean_off)', () => {
    const s = new OnOffSchedule(new GoRand(5n), { onFactor: 5, offFactor: 0, meanOnUs: 2e6, meanOffUs: 8e6, alpha: 2.5 });
    let on = 0;
    let total = 0;
    let prev: number | null = null;
    for (let i = 0; i < 40_000; i++) {
      const p = s.next();
      expect(p.factor).not.toBe(prev);
      prev = p.factor;
      if (p.factor === 5) on += p.end - p.start;
      total += p.end - p.start;
    }
    expect(on / total).toBeCloseTo(0.2, 2);
  });

  const SEED = 21;
  const yaml = specYaml({
    rate: 20,
    seed: SEED,
    clients: [
      clientYaml('calm'),
      clientYaml('burst', '    misbehavior: {kind: bursty, burst_rate_multiplier: 5, mean_on_s: 2, mean_off_s: 8, pareto_alpha: 2.5}'),
    ],
  });
  const T = 4000;
  const reqs = generate(yaml, T * 1e6);
  const burst = reqs.filter((r) => r.clientId === 'burst').map((r) => r.arrivalTime);

  it('every arrival of the bursty client falls in an "on" period of its documented schedule', () => {
    // The documented draw order: client streams from the workload stream in client order, then the misbehavior
    // seed first off the client's own stream.
    const wg = new PartitionedRng(BigInt(SEED)).forSubsystem('workload-gen');
    wg.int63Big(); // client "calm"
    const clientRng = new GoRand(wg.int63Big());
    const schedule = new OnOffSchedule(new GoRand(clientRng.int63Big()), { onFactor: 5, offFactor: 0, meanOnUs: 2e6, meanOffUs: 8e6, alpha: 2.5 });
    const pieces = [];
    for (let end = 0; end < T * 1e6; ) {
      const p = schedule.next();
      pieces.push(p);
      end = p.end;
    }
    let i = 0;
    for (const t of burst) {
      while (pieces[i]!.end < t - 1) i++;
      expect(pieces[i]!.factor, `arrival at ${t} µs`).toBe(5);
    }
    const onTime = pieces.filter((p) => p.factor === 5).reduce((a, p) => a + Math.min(p.end, T * 1e6) - Math.min(p.start, T * 1e6), 0);
    // While on, the client runs at 5 × its 10 req/s.
    expect(withinPoisson(burst.length, (onTime / 1e6) * 50)).toBe(true);
  });

  it('from the outside: bursts at ~5x rate covering ~20% of the time, quiet otherwise', () => {
    const gaps = burst.slice(1).map((t, i) => t - burst[i]!);
    // Inside a burst gaps are ~Exp(50/s) (mean 20 ms): a gap above 1 s is an off period.
    const inBurst = gaps.filter((g) => g < 1e6);
    const offGaps = gaps.filter((g) => g >= 1e6);
    const burstRate = inBurst.length / (inBurst.reduce((a, b) => a + b, 0) / 1e6);
    expect(burstRate / 50).toBeGreaterThan(0.95);
    expect(burstRate / 50).toBeLessThan(1.05);
    const burstTime = inBurst.reduce((a, b) => a + b, 0) / (T * 1e6);
    expect(burstTime).toBeGreaterThan(0.16);
    expect(burstTime).toBeLessThan(0.24);
    expect(offGaps.length / (T / 10)).toBeGreaterThan(0.85);
    expect(offGaps.length / (T / 10)).toBeLessThan(1.15);
    // Counts per 10 s window are over-dispersed (variance/mean >> 1); the calm Poisson client's are not.
    const dispersion = (ts: readonly number[]): number => {
      const bins = new Array<number>(T / 10).fill(0);
      for (const t of ts) bins[Math.floor(t / 10e6)]! += 1;
      const m = bins.reduce((a, b) => a + b, 0) / bins.length;
      return bins.reduce((a, b) => a + (b - m) ** 2, 0) / bins.length / m;
    };
    expect(dispersion(burst)).toBeGreaterThan(10);
    expect(dispersion(reqs.filter((r) => r.clientId === 'calm').map((r) => r.arrivalTime))).toBeLessThan(1.5);
  });
});

describe('bursty with a profile that ends', () => {
  it('stops once the profile has no load left (no endless walk over on/off periods)', () => {
    const yaml = specYaml({
      rate: 20,
      top: 'load_profile:\n  default_multiplier: 0\n  segments:\n    - {start_s: 0, end_s: 50, kind: constant, multiplier: 1}\n',
      clients: [clientYaml('b', '    misbehavior: {kind: bursty, burst_rate_multiplier: 4, mean_on_s: 1, mean_off_s: 1}')],
    });
    const reqs = generate(yaml, 1e12);
    expect(reqs.length).toBeGreaterThan(500);
    expect(reqs.every((r) => r.arrivalTime <= 50e6)).toBe(true);
  });
});

describe('abusive: oversized requests and rapid fire', () => {
  const base = (extra: string): string =>
    specYaml({ rate: 20, clients: [clientYaml('victim'), clientYaml('abuser', extra)] });

  it('input/output multipliers scale every request; rapid fire multiplies the rate', () => {
    const reqs = generate(base('    misbehavior: {kind: abusive, input_multiplier: 8, output_multiplier: 3, rate_multiplier: 5}'), 200e6);
    const abuser = reqs.filter((r) => r.clientId === 'abuser');
    const victim = reqs.filter((r) => r.clientId === 'victim');
    for (const r of abuser) expect([r.inputLen, r.outputLen]).toEqual([80, 30]);
    for (const r of victim) expect([r.inputLen, r.outputLen]).toEqual([10, 10]);
    expect(withinPoisson(abuser.length, 10 * 5 * 200)).toBe(true);
    expect(withinPoisson(victim.length, 10 * 200)).toBe(true);
  });

  it('fixed huge prompts for a fraction of the requests', () => {
    const reqs = generate(base('    misbehavior: {kind: abusive, fixed_input_tokens: 20000, fraction: 0.25}'), 400e6);
    const abuser = reqs.filter((r) => r.clientId === 'abuser');
    const huge = abuser.filter((r) => r.inputLen === 20_000).length;
    expect(huge + abuser.filter((r) => r.inputLen === 10).length).toBe(abuser.length);
    // Binomial(n, 0.25): within 4.5 standard deviations.
    const n = abuser.length;
    expect(Math.abs(huge - n * 0.25)).toBeLessThan(4.5 * Math.sqrt(n * 0.25 * 0.75));
  });

  it('leaves every other client exactly as it was (the abuser draws from its own stream)', () => {
    const view = (yaml: string): Record<string, unknown>[] =>
      generate(yaml, 100e6).filter((r) => r.clientId === 'victim').map((r) => ({ ...requestView(r), id: '' }));
    const plain = view(base(''));
    expect(view(base('    misbehavior: {kind: abusive, input_multiplier: 4, rate_multiplier: 3, fraction: 0.5}'))).toEqual(plain);
    expect(view(base('    misbehavior: {kind: bursty, burst_rate_multiplier: 9, mean_on_s: 1, mean_off_s: 3}'))).toEqual(plain);
  });
});

describe('adversarial: synchronised bursts', () => {
  const adv = (id: string, extra = ''): string =>
    clientYaml(id, `    misbehavior: {kind: adversarial, group: botnet, period_s: 10, start_s: 5, burst_size: 20, jitter_ms: 50${extra}}`);

  it('every client of the group fires burst_size requests inside [instant, instant + jitter) at the shared instants', () => {
    const yaml = specYaml({ rate: 30, clients: [clientYaml('normal'), adv('b1', ', background_multiplier: 0'), adv('b2', ', background_multiplier: 0'), adv('b3', ', background_multiplier: 0')] });
    const reqs = generate(yaml, 200e6);
    const p = { startUs: 5e6, periodUs: 10e6, size: 20, jitterUs: 50e3 };
    const offsets: number[] = [];
    for (const id of ['b1', 'b2', 'b3']) {
      const ts = reqs.filter((r) => r.clientId === id).map((r) => r.arrivalTime);
      expect(ts).toHaveLength(20 * 20);
      for (let k = 0; k < 20; k++) {
        const instant = burstInstant(p, k);
        const inBurst = ts.filter((t) => t >= instant && t < instant + 50e3);
        expect(inBurst, `${id}, burst ${k}`).toHaveLength(20);
        offsets.push(...inBurst.map((t) => t - instant));
      }
    }
    // Uniform jitter over [0, 50 ms): mean 25 ms, and both halves used.
    const mean = offsets.reduce((a, b) => a + b, 0) / offsets.length;
    expect(Math.abs(mean - 25e3)).toBeLessThan(4.5 * (50e3 / Math.sqrt(12)) / Math.sqrt(offsets.length));
    expect(offsets.filter((o) => o < 25e3).length / offsets.length).toBeCloseTo(0.5, 1);
    // The normal client keeps its Poisson arrivals (a quarter of 30 req/s).
    expect(withinPoisson(countIn(reqs, 0, 200, 'normal'), 7.5 * 200)).toBe(true);
  });

  it('the background process keeps running by default, and jitter 0 puts a whole burst on one tick', () => {
    const yaml = specYaml({ rate: 20, clients: [clientYaml('x', '    misbehavior: {kind: adversarial, group: g, period_s: 20, burst_size: 50}')] });
    const reqs = generate(yaml, 100e6);
    for (const instant of [20e6, 40e6, 60e6, 80e6]) expect(reqs.filter((r) => r.arrivalTime === instant).length).toBeGreaterThanOrEqual(50);
    expect(withinPoisson(reqs.length - 4 * 50, 20 * 100)).toBe(true);
  });

  it('bursts outside the client\'s lifecycle windows are skipped', () => {
    const yaml = specYaml({
      rate: 20,
      clients: [clientYaml('w', '    lifecycle: {windows: [{start_us: 0, end_us: 30000000}]}\n    misbehavior: {kind: adversarial, group: g, period_s: 10, burst_size: 7, background_multiplier: 0}')],
    });
    const reqs = generate(yaml, 100e6);
    expect(reqs.map((r) => r.arrivalTime)).toEqual([...new Array<number>(7).fill(10e6), ...new Array<number>(7).fill(20e6)]);
  });

  it('BurstStream yields sorted arrivals per instant', () => {
    const s = new BurstStream(new GoRand(1n), { startUs: 100, periodUs: 1000, size: 5, jitterUs: 900 });
    const ts = Array.from({ length: 50 }, () => s.take());
    expect([...ts].sort((a, b) => a - b)).toEqual(ts);
  });
});
