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
