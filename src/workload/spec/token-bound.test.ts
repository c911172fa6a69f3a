import { describe, expect, it } from 'vitest';
import { MAX_INT64 } from '../../domain/units.js';
import { parseWorkloadSpec } from './parse.js';
import { checkWorkloadTokens, minLength } from './token-bound.js';

const dist = (type: string, params: Record<string, number>) => ({ type, params: new Map(Object.entries(params)), file: '' });

function spec(input: string, extra = ''): ReturnType<typeof parseWorkloadSpec> {
  return parseWorkloadSpec(`version: "2"\nseed: 1\naggregate_rate: 10\nnum_requests: 200\nclients:\n  - id: a\n    rate_fraction: 1\n    arrival: {process: poisson}\n    input_distribution: ${input}\n    output_distribution: {type: constant, params: {value: 5}}\n${extra}`, 's.yaml');
}

describe('the up-front token total', () => {
  it('the smallest length of each distribution', () => {
    expect(minLength(dist('constant', { value: 7 }))).toBe(7);
    expect(minLength(dist('gaussian', { mean: 100, std_dev: 10, min: 50, max: 150 }))).toBe(50);
    expect(minLength(dist('exponential', { mean: 100 }))).toBe(1);
    expect(minLength(dist('lognormal', { mu: 5, sigma: 1, min: 30 }))).toBe(30);
    expect(minLength(dist('empirical', { 64: 0.5, 512: 0.5 }))).toBe(64);
    expect(minLength(dist('pareto_lognormal', { alpha: 1, xm: 100, mu: 5, sigma: 1, mix_weight: 0.5 }))).toBe(1);
  });

  it('refuses 200 x 9M tokens, passes 200 x 4M', () => {
    expect(() => checkWorkloadTokens(spec('{type: constant, params: {value: 9000000}}'), 's.yaml', 200, MAX_INT64, 'num_requests')).toThrow(/^s\.yaml: num_requests is 200 and every request holds at least 9,000,005 tokens/);
    expect(() => checkWorkloadTokens(spec('{type: constant, params: {value: 4000000}}'), 's.yaml', 200, MAX_INT64, 'num_requests')).not.toThrow();
  });

  it('is skipped where generation could stop first: a horizon, or no client that goes on for ever', () => {
    const big = '{type: constant, params: {value: 9000000}}';
    expect(() => checkWorkloadTokens(spec(big), 's.yaml', 200, 1_000_000, 'num_requests')).not.toThrow();
    const windowed = spec(big, '    lifecycle:\n      windows:\n        - {start_us: 0, end_us: 1000000}\n');
    expect(() => checkWorkloadTokens(windowed, 's.yaml', 200, MAX_INT64, 'num_requests')).not.toThrow();
  });
});

describe('the up-front total before a horizon', () => {
  const cohort = (horizonUs: number, rate = 50): string => `version: "2"
seed: 3
aggregate_rate: ${rate}
clients:
  - id: steady
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 100}}
    output_distribution: {type: constant, params: {value: 100}}
cohorts:
  - id: office
    population: 20
    rate_fraction: 2
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 300}}
    output_distribution: {type: constant, params: {value: 120}}
    diurnal: {peak_hour: 14, peak_to_trough_ratio: 4}
horizon: ${horizonUs}
`;

  it('refuses a day-long cohort at 50 req/s (about 3.2 million requests, over a billion token ids) in milliseconds, naming the fix', () => {
    const spec = parseWorkloadSpec(cohort(86_400_000_000), 'c.yaml');
    const t0 = performance.now();
    expect(() => checkWorkloadTokens(spec, 'c.yaml', 0, spec.horizon, 'num_requests')).toThrow(/^c\.yaml: the clients send at least 3,1\d\d,\d\d\d requests before the horizon \(86,400 s.*above the limit of 1,000,000,000.*set num_requests \(or --num-requests\), a shorter horizon \(--horizon\), or a lower aggregate_rate/);
    expect(performance.now() - t0).toBeLessThan(500);
  });

  it('passes what stays below the limit: the same day at 1 req/s, the hour at 50 req/s, and a request cap', () => {
    for (const [h, rate] of [[86_400_000_000, 1], [3_600_000_000, 50]] as const) {
      const spec = parseWorkloadSpec(cohort(h, rate), 'c.yaml');
      expect(() => checkWorkloadTokens(spec, 'c.yaml', 0, spec.horizon, 'num_requests')).not.toThrow();
    }
    const spec = parseWorkloadSpec(cohort(86_400_000_000), 'c.yaml');
    expect(() => checkWorkloadTokens(spec, 'c.yaml', 100_000, spec.horizon, 'num_requests')).not.toThrow();
  });

  it('refuses more requests than the request limit before a horizon', () => {
    const spec = parseWorkloadSpec(`version: "2"\nseed: 1\naggregate_rate: 100000\nclients:\n  - id: a\n    rate_fraction: 1\n    arrival: {process: constant}\n    input_distribution: {type: constant, params: {value: 1}}\n    output_distribution: {type: constant, params: {value: 1}}\nhorizon: 300000000\n`, 's.yaml');
    expect(() => checkWorkloadTokens(spec, 's.yaml', 0, spec.horizon, 'num_requests')).toThrow(/at least 29,99\d,\d\d\d requests before the horizon .* above the limit of 20,000,000/);
  });
});
