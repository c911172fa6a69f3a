import { describe, expect, it } from 'vitest';
import { BlisError } from '../domain/errors.js';
import { formatLatencyProfile, parseLatencyProfile } from './profile.js';

const GOOD = `# fitted on my server
kind: latency-profile
version: 1
latency_model: corrected-physics
model: meta-llama/llama-3.1-8b-instruct
hardware: H100
tp: 2
coefficients:
  compute: 1.04
  kv_read: 0.9
  step_us: 310.5
fit:
  iterations: 4
  traces: [a.csv]
`;

function located(text: string): BlisError {
  try {
    parseLatencyProfile(text, 'p.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(BlisError);
    return e as BlisError;
  }
  throw new Error('expected an error');
}

describe('latency profiles', () => {
  it('reads the coefficients it names and what it was fitted on; provenance is ignored', () => {
    const p = parseLatencyProfile(GOOD, 'p.yaml');
    expect(p).toEqual({ latencyModel: 'corrected-physics', coefficients: { compute: 1.04, kv_read: 0.9, step_us: 310.5 }, model: 'meta-llama/llama-3.1-8b-instruct', hardware: 'H100', tp: 2 });
  });

  it('writes a profile that reads back to the same numbers, byte-stable', () => {
    const p = { latencyModel: 'corrected-physics' as const, coefficients: { compute: 1.0404040404040404, weight_read: 1, kv_read: 0.123456789012345, comm: 1, step_us: 1234.5678901234567, request_us: 0, frontend_us: 9876.54321 }, model: 'm', hardware: 'H100', tp: 1 };
    const text = formatLatencyProfile(p, { iterations: 3, held_out: { ttft_mape_pct: 2.5 }, traces: ['a.csv', 'b.csv'] }, ['written by a test']);
    expect(text).toBe(formatLatencyProfile(p, { iterations: 3, held_out: { ttft_mape_pct: 2.5 }, traces: ['a.csv', 'b.csv'] }, ['written by a test']));
    expect(text.startsWith('# written by a test\nkind: latency-profile\n')).toBe(true);
    expect(parseLatencyProfile(text, 'out.yaml')).toEqual(p);
  });

  it('points at file:line:col for each kind of mistake', () => {
    expect(located(GOOD.replace('kind: latency-profile', 'kind: policy')).message).toMatch(/^p\.yaml:2:7: kind: kind is "policy", not a latency profile; set kind: latency-profile$/);
    expect(located(GOOD.replace('  kv_read: 0.9', '  kv_read: -1')).message).toMatch(/^p\.yaml:10:12: coefficients\.kv_read: must be a finite number >= 0, got -1/);
    expect(located(GOOD.replace('  kv_read: 0.9', '  kv_reed: 0.9')).message).toMatch(/^p\.yaml:10:3: coefficients\.kv_reed: unknown coefficient "kv_reed"; valid: compute, weight_read/);
    expect(located(GOOD.replace('  compute: 1.04', '  compute: 0')).message).toMatch(/compute: must be > 0/);
    expect(located(GOOD.replace('tp: 2', 'tp: two')).message).toMatch(/^p\.yaml:7:5: tp: must be a positive integer/);
    expect(located(GOOD.replace('latency_model: corrected-physics', 'latency_model: trained-physics')).message).toMatch(/latency_model "trained-physics" has no fittable coefficients/);
    expect(located(GOOD.replace('version: 1', 'version: 2')).message).toMatch(/version 2 is not supported/);
    expect(located(`${GOOD}extra: 1\n`).message).toMatch(/^p\.yaml:15:1: extra: unknown key "extra"/);
    expect(located('kind: latency-profile\nlatency_model: corrected-physics\n').message).toMatch(/missing "coefficients"/);
    expect(located('- 1\n- 2\n').message).toMatch(/a latency profile is a YAML mapping/);
    expect(located('kind: [unclosed\n').message).toMatch(/^p\.yaml:\d+:\d+: invalid YAML/);
  });
});

describe('fitted_range (the load a profile was fitted on)', () => {
  const base = 'kind: latency-profile\nversion: 1\nlatency_model: corrected-physics\ncoefficients: {step_us: 500}\n';
  it('round-trips and warns outside the fitted request rates (±10 %)', async () => {
    const { parseLatencyProfile: parse, formatLatencyProfile: format } = await import('./profile.js');
    const { profileRangeWarning, arrivalRate } = await import('./profile-range.js');
    const p = parse(`${base}fitted_range: {request_rate: [2, 6.5], batch_size: [4, 31]}\n`, 'p.yaml');
    expect(p.range).toEqual({ requestRate: [2, 6.5], batchSize: [4, 31] });
    expect(parse(format(p, null), 'q.yaml')).toEqual(p);
    expect(profileRangeWarning(p.range, 'p.yaml', 7)).toBeUndefined();
    expect(profileRangeWarning(p.range, 'p.yaml', 1.9)).toBeUndefined();
    expect(profileRangeWarning(p.range, 'p.yaml', 9)).toMatch(/p\.yaml was fitted on 2\.00–6\.50 req\/s \(decode batches of 4–31 requests\); this workload arrives at 9\.00 req\/s, outside that range/);
    expect(profileRangeWarning(undefined, 'p.yaml', 9)).toBeUndefined();
    expect(arrivalRate([0, 500_000, 1_000_000])).toBe(2);
    expect(() => parse(`${base}fitted_range: {request_rate: [6, 2], batch_size: [4, 31]}\n`, 'p.yaml')).toThrow(/p\.yaml:5:\d+: fitted_range\.request_rate: must be \[low, high\]/);
    expect(() => parse(`${base}fitted_range: {request_rate: [1, 2]}\n`, 'p.yaml')).toThrow(/needs both request_rate and batch_size/);
  });
});
