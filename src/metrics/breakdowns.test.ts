import { describe, expect, it } from 'vitest';
import {
  computePerModelMetrics,
  computePerSloDistributions,
  computePerTenantMetrics,
  computeSessionMetrics,
  jainFairnessIndex,
} from './breakdowns.js';
import { newDistribution } from './cluster-metrics.js';
import { done, outcome } from '../../test/metrics/outcomes.js';

describe('computePerSloDistributions', () => {
  it('groups by class with "" as "default", in sorted order, ITL from the per-request mean', () => {
    const m = computePerSloDistributions([
      done('a', 100, 1000, { sloClass: 'critical', itlMean: 5 }),
      done('b', 300, 3000, { sloClass: 'critical', itlMean: 7 }),
      done('c', 50, 500, { itlMean: 2.5 }),
      outcome({ id: 'd', sloClass: 'batch', hasTTFT: true, ttft: 40 }),
      done('e', 1, 1, { sloClass: 'dropped', registered: false }),
    ]);
    expect([...m.keys()]).toEqual(['batch', 'critical', 'default']);
    expect(m.get('critical')).toEqual({ ttft: newDistribution([100, 300]), itl: newDistribution([5, 7]), e2e: newDistribution([1000, 3000]) });
    expect(m.get('default')?.itl.mean).toBe(2.5);
    // A TTFT without completion creates the class with empty ITL/E2E distributions.
    expect(m.get('batch')?.ttft.count).toBe(1);
    expect(m.get('batch')?.e2e.count).toBe(0);
  });
});

describe('computePerModelMetrics', () => {
  it('is null when no request carries a model', () => {
    expect(computePerModelMetrics([done('a', 1, 2)], 1e6)).toBeNull();
  });
  it('computes per-model latencies and throughput over the whole run, tokens from planned output length', () => {
    const m = computePerModelMetrics(
      [
        done('a', 100, 1000, { model: 'llama', outputLen: 30 }),
        done('b', 200, 2000, { model: 'llama', outputLen: 50 }),
        outcome({ id: 'c', model: 'mistral', hasTTFT: true, ttft: 10 }),
        done('d', 1, 1, { model: '' }),
      ],
      4_000_000,
    );
    expect([...(m?.keys() ?? [])]).toEqual(['llama', 'mistral']);
    const l = m?.get('llama');
    expect(l?.totalRequests).toBe(2);
    expect(l?.throughputRps).toBe(0.5);
    expect(l?.tokensPerSec).toBe(20);
    expect(l?.ttft.p50).toBe(150);
    const s = m?.get('mistral');
    expect([s?.totalRequests, s?.throughputRps, s?.tokensPerSec, s?.ttft.count]).toEqual([0, 0, 0, 1]);
  });
});

describe('per-tenant metrics and Jain index', () => {
  it('counts completed requests and planned output tokens per tenant', () => {
    const t = computePerTenantMetrics([
      done('a', 1, 2, { tenantId: 'acme', outputLen: 10 }),
      done('b', 1, 2, { tenantId: 'acme', outputLen: 5 }),
      done('c', 1, 2, { tenantId: 'beta', outputLen: 7 }),
      outcome({ id: 'd', tenantId: 'beta', outputLen: 100 }),
      done('e', 1, 2, { outputLen: 100 }),
    ]);
    expect([...(t?.values() ?? [])]).toEqual([
      { tenantId: 'acme', completedRequests: 2, totalTokensServed: 15 },
      { tenantId: 'beta', completedRequests: 1, totalTokensServed: 7 },
    ]);
  });
  it('is null without tenants', () => {
    expect(computePerTenantMetrics([done('a', 1, 2)])).toBeNull();
  });
  it('Jain: (Σx)²/(n·Σx²); 0 for none, 1 for all-zero or one tenant', () => {
    expect(jainFairnessIndex(new Map([['a', 1], ['b', 3]]))).toBe(16 / 20);
    expect(jainFairnessIndex(new Map())).toBe(0);
    expect(jainFairnessIndex(new Map([['a', 0], ['b', 0]]))).toBe(1);
    expect(jainFairnessIndex(new Map([['a', 42]]))).toBe(1);
  });
});

describe('computeSessionMetrics', () => {
  it('is null without session requests', () => {
    expect(computeSessionMetrics([done('a', 1, 2)])).toBeNull();
  });
  it('splits TTFT by round (ms) and measures each session from round-0 arrival to last completion', () => {
    const s = computeSessionMetrics([
      done('s1r0', 2000, 10_000, { sessionId: 's1', roundIndex: 0, arrivalTime: 1_000_000 }),
      done('s1r1', 500, 4000, { sessionId: 's1', roundIndex: 1, arrivalTime: 1_020_000 }),
      // Session 2 has no round 0 among registered requests: counted, but no duration.
      done('s2r1', 700, 1000, { sessionId: 's2', roundIndex: 1, arrivalTime: 5_000_000 }),
      // Session 3 never completed: duration 0 − arrival < 0 is left out.
      outcome({ id: 's3r0', sessionId: 's3', roundIndex: 0, arrivalTime: 7_000_000, hasTTFT: true, ttft: 3000 }),
    ]);
    expect(s?.sessionCount).toBe(3);
    expect(s?.ttftCold).toEqual(newDistribution([2, 3]));
    expect(s?.ttftWarm).toEqual(newDistribution([0.5, 0.7]));
    // s1: max(1_010_000, 1_024_000)/1000 − 1000 = 24 ms
    expect(s?.sessionDuration).toEqual(newDistribution([24]));
  });
});
