import { describe, expect, it } from 'vitest';
import { collectRawMetrics, newDistribution, type RawMetrics } from './cluster-metrics.js';
import { FitnessError, computeFitness, fitnessLines, parseFitnessWeights } from './fitness.js';

function raw(p: Partial<RawMetrics>): RawMetrics {
  const base = collectRawMetrics({
    aggregate: { completedRequests: 0, totalOutputTokens: 0, simEndedTime: 0, droppedUnservable: 0, timedOutRequests: 0, lengthCappedRequests: 0, requests: [] },
    perInstance: null,
    scheduler: '',
    rejectedRequests: 0,
    routingRejections: 0,
  });
  return { ...base, ...p };
}

describe('parseFitnessWeights', () => {
  it('splits on "," then the first ":", trimming, last duplicate wins', () => {
    expect([...parseFitnessWeights(' throughput : 0.5 , p99_ttft:1e-1,throughput:2')]).toEqual([
      ['throughput', 2],
      ['p99_ttft', 0.1],
    ]);
    expect(parseFitnessWeights('').size).toBe(0);
    // Keys are not validated here; an empty key survives until computeFitness.
    expect([...parseFitnessWeights(':1')]).toEqual([['', 1]]);
  });
  it('rejects malformed pairs and values with the reference messages', () => {
    const cases: [string, string][] = [
      ['throughput', 'invalid fitness weight "throughput": expected key:value'],
      ['throughput:1,', 'invalid fitness weight "": expected key:value'],
      ['a:x', 'invalid fitness weight value for "a": strconv.ParseFloat: parsing "x": invalid syntax'],
      ['a:1e999', 'invalid fitness weight value for "a": strconv.ParseFloat: parsing "1e999": value out of range'],
      ['a:-1', 'invalid weight for "a": must be a finite non-negative number, got -1'],
      ['a:-2500000', 'invalid weight for "a": must be a finite non-negative number, got -2.5e+06'],
      ['a:NaN', 'invalid weight for "a": must be a finite non-negative number, got NaN'],
      ['a:+Inf', 'invalid weight for "a": must be a finite non-negative number, got +Inf'],
      ['a:1:2', 'invalid fitness weight value for "a": strconv.ParseFloat: parsing "1:2": invalid syntax'],
    ];
    for (const [s, msg] of cases) {
      expect(() => parseFitnessWeights(s)).toThrow(FitnessError);
      expect(() => parseFitnessWeights(s)).toThrow(msg);
    }
  });
});

describe('computeFitness', () => {
  it('normalises throughput as v/(v+ref) and latency (ticks) as 1/(1+v/1000)', () => {
    const m = raw({
      requestsPerSec: 100,
      tokensPerSec: 30000,
      ttft: { ...newDistribution([]), p99: 1000, p50: 3000, mean: 0 },
      e2e: { ...newDistribution([]), p99: 9000, p50: 1000, mean: 4000 },
    });
    const all = new Map(['throughput', 'tokens_per_sec', 'p99_ttft', 'p50_ttft', 'mean_ttft', 'p99_e2e', 'p50_e2e', 'mean_e2e'].map((k) => [k, 1]));
    const r = computeFitness(m, all);
    expect(Object.fromEntries(r.components)).toEqual({
      mean_e2e: 0.2,
      mean_ttft: 1,
      p50_e2e: 0.5,
      p50_ttft: 0.25,
      p99_e2e: 0.1,
      p99_ttft: 0.5,
      throughput: 0.5,
      tokens_per_sec: 0.75,
    });
    expect([...r.components.keys()]).toEqual([...r.components.keys()].sort());
  });
  it('weights are not normalised; score sums component·weight in key order', () => {
    const m = raw({ requestsPerSec: 100, ttft: { ...newDistribution([]), p99: 1000 } });
    const r = computeFitness(m, new Map([['throughput', 2], ['p99_ttft', 3]]));
    expect(r.score).toBe(0.5 * 3 + 0.5 * 2);
    expect(fitnessLines(r)).toEqual(['Score: 2.500000', '  p99_ttft: 0.500000', '  throughput: 0.500000']);
  });
  it('rejects unknown keys listing the valid ones', () => {
    expect(() => computeFitness(raw({}), new Map([['p90_ttft', 1]]))).toThrow(
      'unknown fitness metric key "p90_ttft"; valid keys: throughput, tokens_per_sec, p99_ttft, p50_ttft, mean_ttft, p99_e2e, p50_e2e, mean_e2e',
    );
  });
  it('is 0 for an empty weight set', () => {
    expect(fitnessLines(computeFitness(raw({}), new Map()))).toEqual(['Score: 0.000000']);
  });
});
