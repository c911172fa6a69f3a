import { describe, expect, it } from 'vitest';
import {
  EMPTY_DISTRIBUTION,
  collectRawMetrics,
  countInversionPairs,
  detectHolBlocking,
  detectPriorityInversions,
  newDistribution,
  type InstanceRawView,
} from './cluster-metrics.js';
import { done, outcome } from '../../test/metrics/outcomes.js';

/** Deterministic LCG for test data (no Math.random). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function naivePairs(arrived: number[], e2e: number[]): number {
  const idx = arrived.map((_, i) => i).sort((a, b) => (arrived[a] as number) - (arrived[b] as number) || (e2e[a] as number) - (e2e[b] as number));
  let c = 0;
  for (let i = 0; i < idx.length; i++)
    for (let j = i + 1; j < idx.length; j++) if ((e2e[idx[i] as number] as number) > 2 * (e2e[idx[j] as number] as number)) c++;
  return c;
}

describe('newDistribution', () => {
  it('is all zero for no values', () => {
    expect(newDistribution([])).toEqual(EMPTY_DISTRIBUTION);
  });
  it('interpolates percentiles at p/100·(n−1) over sorted values, in the input unit', () => {
    // sorted 10,20,30,40,50: p50 rank 2 → 30; p90 rank 3.6 → 40+0.6·10; p95 rank 3.8 → 40+0.8·10; p99 rank 3.96 → 40+0.96·10
    const d = newDistribution([50, 10, 40, 20, 30]);
    expect(d).toEqual({ mean: 30, p50: 30, p90: 46, p95: 48, p99: 49.6, min: 10, max: 50, count: 5 });
  });
  it('returns the single value for every statistic of one sample', () => {
    expect(newDistribution([7.5])).toEqual({ mean: 7.5, p50: 7.5, p90: 7.5, p95: 7.5, p99: 7.5, min: 7.5, max: 7.5, count: 1 });
  });
  it('sums in ascending order (the float mean depends on it)', () => {
    const vals = [1e16, 1, -1e16, 1];
    const sorted = [...vals].sort((a, b) => a - b);
    let s = 0;
    for (const v of sorted) s += v;
    expect(newDistribution(vals).mean).toBe(s / 4);
  });
});

describe('countInversionPairs', () => {
  it('counts earlier requests with more than twice a later E2E', () => {
    // arrival order: e2e 100, 40, 60, 10 → pairs (100,40) (100,10) (40,10) (60,10); (100,60) is not > 120
    expect(countInversionPairs(Float64Array.of(1, 2, 3, 4), Float64Array.of(100, 40, 60, 10))).toBe(4);
  });
  it('is strict: exactly twice is not an inversion', () => {
    expect(countInversionPairs(Float64Array.of(1, 2), Float64Array.of(20, 10))).toBe(0);
  });
  it('never counts pairs with equal arrival times', () => {
    expect(countInversionPairs(Float64Array.of(5, 5), Float64Array.of(100, 1))).toBe(0);
    expect(countInversionPairs(Float64Array.of(5, 5), Float64Array.of(1, 100))).toBe(0);
  });
  it('agrees with the quadratic definition on random data with ties', () => {
    const rnd = lcg(7);
    for (let t = 0; t < 30; t++) {
      const n = 1 + Math.floor(rnd() * 200);
      const arrived = Array.from({ length: n }, () => Math.floor(rnd() * 50));
      const e2e = Array.from({ length: n }, () => Math.floor(rnd() * 1000));
      expect(countInversionPairs(Float64Array.from(arrived), Float64Array.from(e2e))).toBe(naivePairs(arrived, e2e));
    }
  });
  it('handles 50k requests quickly', () => {
    const rnd = lcg(3);
    const n = 50000;
    const arrived = Float64Array.from({ length: n }, (_, i) => i);
    const e2e = Float64Array.from({ length: n }, () => Math.floor(rnd() * 1e6));
    const t0 = performance.now();
    const c = countInversionPairs(arrived, e2e);
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(c).toBeGreaterThan(0);
  });
});

describe('detectPriorityInversions', () => {
  const inst = (requests: ReturnType<typeof outcome>[]): Pick<InstanceRawView, 'requests'> => ({ requests });
  const a = done('a', 1, 100, { arrivalTime: 1 });
  const b = done('b', 1, 10, { arrivalTime: 2 });
  it('counts only under priority-fcfs', () => {
    expect(detectPriorityInversions([inst([a, b])], 'priority-fcfs')).toBe(1);
    for (const s of ['fcfs', '', 'sjf', 'reverse-priority']) expect(detectPriorityInversions([inst([a, b])], s)).toBe(0);
  });
  it('compares only within one SLO class, treating "" as "default"', () => {
    const c = done('c', 1, 10, { arrivalTime: 2, sloClass: 'batch' });
    expect(detectPriorityInversions([inst([a, c])], 'priority-fcfs')).toBe(0);
    const d = done('d', 1, 10, { arrivalTime: 2, sloClass: 'default' });
    expect(detectPriorityInversions([inst([a, d])], 'priority-fcfs')).toBe(1);
  });
  it('compares only within one instance and skips requests without an E2E or not registered', () => {
    expect(detectPriorityInversions([inst([a]), inst([b])], 'priority-fcfs')).toBe(0);
    const noE2e = outcome({ id: 'x', arrivalTime: 0, e2e: 1000 });
    const dropped = done('y', 1, 1000, { arrivalTime: 0, registered: false });
    expect(detectPriorityInversions([inst([noE2e, dropped, b])], 'priority-fcfs')).toBe(0);
  });
});

describe('detectHolBlocking', () => {
  it('needs at least two instances', () => {
    expect(detectHolBlocking([[5, 5, 5]])).toBe(0);
  });
  it('flags instances whose mean queue depth exceeds twice the mean of means (idle instances count as 0)', () => {
    // means 9, 0, 0 → mean of means 3 → 9 > 6
    expect(detectHolBlocking([[8, 10], [], [0, 0]])).toBe(1);
    // means 4, 2 → mean 3 → 4 is not > 6
    expect(detectHolBlocking([[4], [2]])).toBe(0);
  });
  it('is 0 when every queue was empty', () => {
    expect(detectHolBlocking([[0], [0, 0]])).toBe(0);
  });
});

describe('collectRawMetrics', () => {
  const reqs = [done('r1', 1000, 5000, { arrivalTime: 0 }), done('r2', 3000, 1000, { arrivalTime: 10 }), outcome({ id: 'r3', hasTTFT: true, ttft: 2000 })];
  const base = {
    aggregate: { completedRequests: 2, totalOutputTokens: 30, simEndedTime: 2_000_000, droppedUnservable: 1, timedOutRequests: 2, lengthCappedRequests: 3, requests: reqs },
    scheduler: 'priority-fcfs',
    rejectedRequests: 4,
    routingRejections: 5,
  };
  it('builds TTFT/E2E distributions in ticks and throughput per second', () => {
    const m = collectRawMetrics({ ...base, perInstance: null });
    expect(m.ttft.count).toBe(3);
    expect(m.ttft.mean).toBe(2000);
    expect(m.e2e).toEqual(newDistribution([5000, 1000]));
    expect(m.requestsPerSec).toBe(1);
    expect(m.tokensPerSec).toBe(15);
    expect([m.droppedUnservable, m.timedOutRequests, m.lengthCappedRequests, m.rejectedRequests, m.routingRejections]).toEqual([1, 2, 3, 4, 5]);
    expect([m.priorityInversions, m.holBlockingEvents, m.preemptionRate, m.cacheHitRate]).toEqual([0, 0, 0, 0]);
  });
  it('runs the detectors and averages the KV rates over instances', () => {
    const per: InstanceRawView[] = [
      { requests: reqs, waitQSamples: [9], preemptionCount: 3, cacheHitRate: 0.5, kvThrashingRate: 0.25 },
      { requests: [], waitQSamples: [0], preemptionCount: 1, cacheHitRate: 0.25, kvThrashingRate: 0 },
      { requests: [], waitQSamples: [], preemptionCount: 0, cacheHitRate: 0, kvThrashingRate: 0 },
    ];
    const m = collectRawMetrics({ ...base, perInstance: per, gateway: { queueDepth: 1, queueShed: 2, queueRejected: 3, evicted: 4, expired: 5 } });
    expect(m.priorityInversions).toBe(1);
    expect(m.holBlockingEvents).toBe(1);
    expect(m.preemptionRate).toBe(2);
    expect(m.cacheHitRate).toBe(0.25);
    expect(m.kvThrashingRate).toBe(0.25 / 3);
    expect([m.gatewayQueueDepth, m.gatewayQueueShed, m.gatewayQueueRejected, m.gatewayEvicted, m.gatewayExpired]).toEqual([1, 2, 3, 4, 5]);
  });
  it('reports no throughput without completions or without elapsed time', () => {
    const m = collectRawMetrics({ ...base, aggregate: { ...base.aggregate, completedRequests: 0 }, perInstance: null });
    expect([m.requestsPerSec, m.tokensPerSec]).toEqual([0, 0]);
  });
});
