/** Scorer formulas and edge cases, with expected values taken from the reference's scorer tests. */
import { describe, expect, it } from 'vitest';
import { noHitLruScorer, precisePrefixCacheScorer, prefixAffinityScorer } from './scorers-cache.js';
import {
  activeRequestsScorer,
  kvUtilizationScorer,
  loadAwareScorer,
  loadBalanceScorer,
  loraAffinityScorer,
  queueDepthScorer,
  requestAdapter,
  runningRequestsScorer,
  vllmDpScorer,
} from './scorers-load.js';
import { makeAdapterRequest, makeRequest, seqTokens, snaps } from './test-fixtures.js';
import type { CachedBlocksFn, RoutingSnapshot, Scorer } from './types.js';

const req = makeRequest('r1', [1, 2, 3]);

function scoresOf(scorer: Scorer, snapshots: RoutingSnapshot[], r = req): Record<string, number> {
  const values = scorer.score(r, snapshots);
  return Object.fromEntries(snapshots.map((s, i) => [s.id, values[i] as number]));
}

const table = (counts: Record<string, number>): CachedBlocksFn => (id) => counts[id] ?? 0;

describe('queue-depth / running-requests / vllm-dp (inverted min-max)', () => {
  it('maps the extremes to 1 and 0 and the midpoint to 0.5', () => {
    expect(scoresOf(queueDepthScorer(), snaps(['a', { queueDepth: 10 }], ['b', { queueDepth: 5 }], ['c', { queueDepth: 0 }]))).toEqual({ a: 0, b: 0.5, c: 1 });
    expect(scoresOf(runningRequestsScorer(), snaps(['a', { batchSize: 0 }], ['b', { batchSize: 5 }], ['c', { batchSize: 10 }]))).toEqual({ a: 1, b: 0.5, c: 0 });
  });

  it('scores 1.0 everywhere when all equal, including a single instance and all zero', () => {
    expect(scoresOf(queueDepthScorer(), snaps(['a', { queueDepth: 5 }], ['b', { queueDepth: 5 }]))).toEqual({ a: 1, b: 1 });
    expect(scoresOf(queueDepthScorer(), snaps(['a', { queueDepth: 42 }]))).toEqual({ a: 1 });
    expect(scoresOf(runningRequestsScorer(), snaps(['a'], ['b']))).toEqual({ a: 1, b: 1 });
  });

  it('queue-depth reads only the queue', () => {
    const s = snaps(['a', { queueDepth: 10 }], ['b', { queueDepth: 0, batchSize: 100, inFlightRequests: 50 }]);
    expect(scoresOf(queueDepthScorer(), s)).toEqual({ a: 0, b: 1 });
  });

  it('vllm-dp weighs waiting four times running', () => {
    const s = snaps(['a', { queueDepth: 10, batchSize: 5 }], ['b', { queueDepth: 5, batchSize: 10 }], ['c', { queueDepth: 2, batchSize: 2 }]);
    expect(scoresOf(vllmDpScorer(), s)).toEqual({ a: 0, b: 15 / 35, c: 1 });
    const equalRaw = snaps(['x', { queueDepth: 3, batchSize: 10 }], ['y', { queueDepth: 2, batchSize: 14 }], ['z', { queueDepth: 5, batchSize: 2 }]);
    expect(scoresOf(vllmDpScorer(), equalRaw)).toEqual({ x: 1, y: 1, z: 1 });
  });
});

describe('kv-utilization, load-balance, load-aware', () => {
  it('kv-utilization is 1 − utilisation', () => {
    expect(scoresOf(kvUtilizationScorer(), snaps(['a'], ['b', { kvUtilization: 0.5 }], ['c', { kvUtilization: 1 }]))).toEqual({ a: 1, b: 0.5, c: 0 });
  });

  it('load-balance is 1/(1 + effective load), in-flight included', () => {
    const s = snaps(['a'], ['b', { queueDepth: 9 }], ['c', { queueDepth: 50, batchSize: 40, inFlightRequests: 9 }]);
    expect(scoresOf(loadBalanceScorer(), s)).toEqual({ a: 1, b: 0.1, c: 0.01 });
  });

  it('load-aware tops out at 0.5 and reaches 0 at the 128 threshold', () => {
    const s = snaps(['a'], ['b', { queueDepth: 64 }], ['c', { queueDepth: 128 }], ['d', { queueDepth: 200 }], ['e', { queueDepth: 1 }]);
    expect(scoresOf(loadAwareScorer(), s)).toEqual({ a: 0.5, b: 0.25, c: 0, d: 0, e: 0.5 * (1 - 1 / 128) });
  });
});

describe('active-requests (max-only normalisation)', () => {
  it('idle instances score 1, the busiest 0', () => {
    const s = snaps(['a'], ['b', { inFlightRequests: 5 }], ['c', { inFlightRequests: 10 }]);
    expect(scoresOf(activeRequestsScorer(), s)).toEqual({ a: 1, b: 0.5, c: 0 });
  });

  it('all equal and non-zero scores 0.0, unlike the min-max scorers', () => {
    expect(scoresOf(activeRequestsScorer(), snaps(['a', { inFlightRequests: 5 }], ['b', { inFlightRequests: 5 }]))).toEqual({ a: 0, b: 0 });
    expect(scoresOf(activeRequestsScorer(), snaps(['a', { inFlightRequests: 5 }]))).toEqual({ a: 0 });
    expect(scoresOf(activeRequestsScorer(), snaps(['a'], ['b']))).toEqual({ a: 1, b: 1 });
  });
});

describe('lora-affinity', () => {
  const warm = snaps(['warm', { residentAdapters: new Set(['sql-lora', 'other']) }], ['cold', { residentAdapters: new Set(['other']) }]);

  it('prefers instances holding the adapter', () => {
    expect(scoresOf(loraAffinityScorer(), warm, makeAdapterRequest('r', 'sql-lora'))).toEqual({ warm: 1, cold: 0 });
  });

  it('is neutral for base-model requests, all-cold, all-warm and single instances', () => {
    expect(scoresOf(loraAffinityScorer(), warm, makeRequest('r'))).toEqual({ warm: 1, cold: 1 });
    expect(scoresOf(loraAffinityScorer(), snaps(['a'], ['b']), makeAdapterRequest('r', 'sql-lora'))).toEqual({ a: 1, b: 1 });
    const allWarm = snaps(['a', { residentAdapters: new Set(['x']) }], ['b', { residentAdapters: new Set(['x']) }]);
    expect(scoresOf(loraAffinityScorer(), allWarm, makeAdapterRequest('r', 'x'))).toEqual({ a: 1, b: 1 });
    expect(scoresOf(loraAffinityScorer(), snaps(['a']), makeAdapterRequest('r', 'x'))).toEqual({ a: 1 });
  });

  it('reads the adapter only when the request carries a string one', () => {
    expect(requestAdapter(makeRequest('r'))).toBe('');
    expect(requestAdapter(makeAdapterRequest('r', 'a1'))).toBe('a1');
  });
});

describe('precise-prefix-cache', () => {
  it('min-max normalises cached block counts', () => {
    const s = snaps(['inst-0'], ['inst-1'], ['inst-2']);
    expect(scoresOf(precisePrefixCacheScorer(table({ 'inst-0': 5, 'inst-1': 3, 'inst-2': 0 })), s)).toEqual({ 'inst-0': 1, 'inst-1': 0.6, 'inst-2': 0 });
  });

  it('scores 1.0 everywhere when counts are equal (even all zero) or there is no query', () => {
    expect(scoresOf(precisePrefixCacheScorer(table({ a: 3, b: 3 })), snaps(['a'], ['b']))).toEqual({ a: 1, b: 1 });
    expect(scoresOf(precisePrefixCacheScorer(table({})), snaps(['a'], ['b']))).toEqual({ a: 1, b: 1 });
    expect(scoresOf(precisePrefixCacheScorer(null), snaps(['a'], ['b']))).toEqual({ a: 1, b: 1 });
  });

  it('treats an instance unknown to the query as holding nothing', () => {
    expect(scoresOf(precisePrefixCacheScorer(table({ a: 5, b: 2 })), snaps(['a'], ['b'], ['c']))).toEqual({ a: 1, b: 0.4, c: 0 });
  });
});

describe('no-hit-lru', () => {
  const cold = table({});
  const abc = snaps(['a'], ['b'], ['c']);

  it('ranks never-used instances first, then least to most recently used', () => {
    const s = noHitLruScorer(cold);
    const r1 = makeRequest('r1', [1]);
    expect(scoresOf(s, abc, r1)).toEqual({ a: 1, b: 0.5, c: 0 });
    s.observe?.(r1, 'a');
    const r2 = makeRequest('r2', [1]);
    expect(scoresOf(s, abc, r2)).toEqual({ b: 1, c: 0.5, a: 0 });
    s.observe?.(r2, 'b');
    expect(scoresOf(s, abc, makeRequest('r3', [1]))).toEqual({ c: 1, a: 0.5, b: 0 });
  });

  it('re-promotes an instance routed to again', () => {
    const s = noHitLruScorer(cold);
    for (const target of ['a', 'b', 'a']) {
      const r = makeRequest(`r-${target}`, [1]);
      s.score(r, abc);
      s.observe?.(r, target);
    }
    expect(scoresOf(s, abc, makeRequest('check', [1]))).toEqual({ c: 1, b: 0.5, a: 0 });
  });

  it('gives warm requests 0.5 everywhere and does not record them', () => {
    let warmA = true;
    const s = noHitLruScorer((id) => (id === 'a' && warmA ? 3 : 0));
    const r = makeRequest('r1', [1]);
    expect(scoresOf(s, snaps(['a'], ['b']), r)).toEqual({ a: 0.5, b: 0.5 });
    s.observe?.(r, 'a');
    warmA = false;
    expect(scoresOf(s, snaps(['a'], ['b']), makeRequest('r2', [1]))).toEqual({ a: 1, b: 0 });
  });

  it('ignores an observation for a request other than the one just scored', () => {
    const s = noHitLruScorer(cold);
    s.score(makeRequest('r1', [1]), snaps(['a'], ['b']));
    s.observe?.(makeRequest('r2', [1]), 'a');
    expect(scoresOf(s, snaps(['a'], ['b']), makeRequest('r3', [1]))).toEqual({ a: 1, b: 0 });
  });

  it('is neutral without a query, and scores a lone cold instance 1.0', () => {
    expect(scoresOf(noHitLruScorer(null), snaps(['a'], ['b']))).toEqual({ a: 0.5, b: 0.5 });
    expect(scoresOf(noHitLruScorer(cold), snaps(['only']))).toEqual({ only: 1 });
  });

  it('forgets instances that left the routable set', () => {
    const s = noHitLruScorer(cold);
    for (const target of ['a', 'b']) {
      const r = makeRequest(`r-${target}`, [1]);
      s.score(r, abc);
      s.observe?.(r, target);
    }
    // a leaves for one decision, so its recency is dropped...
    s.score(makeRequest('r3', [1]), snaps(['b'], ['c']));
    // ...and when it returns it ranks as never used (snapshot order among those), ahead of c.
    expect(scoresOf(s, abc, makeRequest('r4', [1]))).toEqual({ a: 1, c: 0.5, b: 0 });
  });
});

describe('prefix-affinity', () => {
  const two = snaps(['inst_0'], ['inst_1']);

  it('scores 0 without history and after recording scores the matched share of blocks', () => {
    const s = prefixAffinityScorer(16);
    const full = makeRequest('r1', seqTokens(64));
    expect(scoresOf(s, two, full)).toEqual({ inst_0: 0, inst_1: 0 });
    s.observe?.(full, 'inst_0');
    const partial = makeRequest('r2', [...seqTokens(16), ...seqTokens(48, 9000)]);
    expect(scoresOf(s, two, partial)).toEqual({ inst_0: 0.25, inst_1: 0 });
    s.observe?.(partial, 'inst_1');
    expect(scoresOf(s, two, makeRequest('r3', seqTokens(64)))).toEqual({ inst_0: 1, inst_1: 0.25 });
  });

  it('scores 0 for a prompt shorter than one block', () => {
    const s = prefixAffinityScorer(16);
    s.observe?.(makeRequest('r1', seqTokens(64)), 'inst_0');
    expect(scoresOf(s, two, makeRequest('r2', [1, 2, 3]))).toEqual({ inst_0: 0, inst_1: 0 });
  });

  it('records the observed request, not the last scored one', () => {
    const s = prefixAffinityScorer(4);
    s.score(makeRequest('rA', [1, 2, 3, 4, 5, 6, 7, 8]), two);
    s.observe?.(makeRequest('rB', [10, 20, 30, 40]), 'inst_1');
    expect(scoresOf(s, two, makeRequest('rB2', [10, 20, 30, 40]))).toEqual({ inst_0: 0, inst_1: 1 });
  });

  it('rejects a non-positive block size', () => {
    expect(() => prefixAffinityScorer(0)).toThrow(RangeError);
  });
});
