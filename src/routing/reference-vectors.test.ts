/**
 * Decision sequences checked against the reference implementation. The expected values were obtained by
 * running the reference Go code (inference-sim f90a1e3: sim/routing*.go, sim/admission.go, with Go's
 * math/rand seeded as its PartitionedRNG does) over exactly the inputs test-fixtures.ts generates. They pin
 * the whole pipeline: scorer arithmetic, float accumulation order, exact-equality ties, when and how the
 * router RNG is drawn, observer timing, and the reason strings.
 */
import { describe, expect, it } from 'vitest';
import { PartitionedRng } from '../engine/partitioned-rng.js';
import { tokenBucket, gaieLegacy, tierShed } from './admission.js';
import { makeRoutingPolicy, type RoutingPolicyOptions } from './registry.js';
import type { ScorerConfig } from './scorer-config.js';
import { makeRequest, runScenario, scenarioCachedBlocks, snaps } from './test-fixtures.js';

function routerRng(seed: bigint) {
  return new PartitionedRng(seed).forSubsystem('router');
}

function opts(scorers: ScorerConfig[] | null, seed: bigint | null, withCache: 'none' | 'scenario' | 'empty' = 'none'): RoutingPolicyOptions {
  return {
    scorers,
    blockSize: 16,
    rng: seed === null ? null : routerRng(seed),
    cachedBlocks: withCache === 'none' ? null : withCache === 'scenario' ? scenarioCachedBlocks : () => 0,
  };
}

const targets = (s: string) => s.split(',').map(Number);

describe('routing decisions match the reference', () => {
  it('least-loaded, all ties broken by the router RNG (seed 42)', () => {
    const r = runScenario(makeRoutingPolicy('least-loaded', opts(null, 42n)), 40, 4, false);
    expect(r.targets).toEqual(targets('2,1,3,0,2,3,1,0,0,3,2,1,2,1,0,3,0,2,1,3,0,1,3,2,2,1,3,0,2,3,0,1,1,3,2,0,1,2,3,0'));
    expect(r.reasons.slice(0, 2)).toEqual(['least-loaded (load=0)', 'least-loaded (load=0)']);
  });

  it('least-loaded with varying load, RNG drawn only on ties (seed 7)', () => {
    const r = runScenario(makeRoutingPolicy('least-loaded', opts(null, 7n)), 40, 4, true);
    expect(r.targets).toEqual(targets('0,3,2,3,1,2,1,2,3,0,2,1,2,3,1,0,3,2,3,0,0,1,2,3,1,0,1,2,3,1,0,3,2,0,1,0,3,2,3,1'));
    expect(r.reasons.slice(0, 6)).toEqual([
      'least-loaded (load=0)',
      'least-loaded (load=2)',
      'least-loaded (load=1)',
      'least-loaded (load=1)',
      'least-loaded (load=3)',
      'least-loaded (load=2)',
    ]);
  });

  it('weighted queue-depth only: every decision a 3-way tie (seed 42)', () => {
    const r = runScenario(makeRoutingPolicy('weighted', opts([{ name: 'queue-depth', weight: 1 }], 42n)), 40, 3, false);
    expect(r.targets).toEqual(targets('0,1,2,0,2,2,0,2,2,0,1,1,1,1,2,0,0,1,2,1,1,1,2,1,0,2,0,0,1,1,2,2,1,0,1,2,2,1,2,1'));
    expect(r.reasons[0]).toBe('weighted-scoring (score=1.000)');
  });

  it('weighted prefix-affinity:3,queue-depth:2,load-balance:1 (seed 42)', () => {
    const profile: ScorerConfig[] = [
      { name: 'prefix-affinity', weight: 3 },
      { name: 'queue-depth', weight: 2 },
      { name: 'load-balance', weight: 1 },
    ];
    const r = runScenario(makeRoutingPolicy('weighted', opts(profile, 42n)), 40, 4, true);
    expect(r.targets).toEqual(targets('0,1,2,0,1,2,0,1,2,0,1,1,0,3,1,0,1,2,0,1,2,0,1,2,0,1,1,2,3,1,0,1,2,0,1,2,0,1,2,0'));
    expect(r.reasons.slice(0, 6)).toEqual(
      ['0.500', '0.389', '0.417', '0.606', '0.750', '0.681'].map((s) => `weighted-scoring (score=${s})`),
    );
    expect(r.scores[0]).toEqual([0.5, 0.11666666666666667, 0.2916666666666667, 0.03333333333333333]);
    expect(r.scores[3]).toEqual([0.6055555555555556, 0.023809523809523808, 0.19444444444444442, 0.5]);
    expect(r.scores[4]).toEqual([0.1388888888888889, 0.7499999999999999, 0.03333333333333333, 0.2638888888888889]);
    expect(r.scores[7]).toEqual([0.020833333333333332, 0.49444444444444446, 0.41666666666666663, 0.11666666666666667]);
  });

  it('weighted with six stateless/stateful scorers at equal weight (seed 3)', () => {
    const profile: ScorerConfig[] = (
      ['prefix-affinity', 'kv-utilization', 'active-requests', 'load-aware', 'running-requests', 'vllm-dp'] as const
    ).map((name) => ({ name, weight: 1 }));
    const r = runScenario(makeRoutingPolicy('weighted', opts(profile, 3n)), 40, 4, true);
    expect(r.targets).toEqual(targets('0,3,1,0,3,1,1,2,0,3,2,1,3,2,1,0,2,1,3,2,0,3,2,1,0,3,1,3,2,1,0,2,1,3,2,0,3,2,1,0'));
    expect(r.scores[0]).toEqual([0.7499999999999999, 0.4809635416666666, 0.42351562499999995, 0.4357291666666666]);
    expect(r.scores[2]).toEqual([0.20406249999999998, 0.5884037990196078, 0.5266666666666666, 0.26559589460784316]);
    expect(r.scores[6]).toEqual([0.46228766025641027, 0.4883333333333333, 0.35471354166666663, 0.4358874198717948]);
  });

  it('weighted precise-prefix-cache:2,no-hit-lru:1,queue-depth:1 over a cache query (seed 42)', () => {
    const profile: ScorerConfig[] = [
      { name: 'precise-prefix-cache', weight: 2 },
      { name: 'no-hit-lru', weight: 1 },
      { name: 'queue-depth', weight: 1 },
    ];
    const r = runScenario(makeRoutingPolicy('weighted', opts(profile, 42n, 'scenario')), 40, 4, true);
    expect(r.targets).toEqual(targets('0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0'));
    // 0.8125 is an exact binary tie at 3 places: Go rounds half to even.
    expect(r.reasons.slice(0, 6)).toEqual(
      ['0.875', '0.875', '0.875', '0.812', '0.875', '0.812'].map((s) => `weighted-scoring (score=${s})`),
    );
    expect(r.scores[1]).toEqual([0.20833333333333331, 0.875, 0.125, 0.29166666666666663]);
    expect(r.scores[3]).toEqual([0.8125, 0.125, 0.25, 0.5416666666666666]);
    expect(r.scores[7]).toEqual([0.125, 0.75, 0.375, 0.35416666666666663]);
  });

  it('no-hit-lru alone with an all-cold cache rotates through the least recently used (seed 5)', () => {
    const r = runScenario(makeRoutingPolicy('weighted', opts([{ name: 'no-hit-lru', weight: 1 }], 5n, 'empty')), 20, 4, false);
    expect(r.targets).toEqual(targets('0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,3'));
    expect(r.scores[1]).toEqual([0, 1, 0.6666666666666667, 0.33333333333333337]);
  });

  it('weighted default profile with a cache query (seed 42)', () => {
    const r = runScenario(makeRoutingPolicy('weighted', opts(null, 42n, 'scenario')), 40, 4, true);
    expect(r.targets).toEqual(targets('0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0,1,2,0'));
    expect(r.reasons.slice(0, 6)).toEqual(
      ['1.000', '0.895', '0.790', '0.840', '0.797', '0.880'].map((s) => `weighted-scoring (score=${s})`),
    );
    expect(r.scores[1]).toEqual([0.30083333333333334, 0.895, 0.07250000000000001, 0.41666666666666663]);
    expect(r.scores[7]).toEqual([0.022499999999999992, 0.825, 0.3775, 0.2841666666666667]);
  });

  it('round-robin and always-busiest', () => {
    const rr = runScenario(makeRoutingPolicy('round-robin', opts(null, null)), 6, 4, true);
    expect(rr.targets).toEqual([0, 1, 2, 3, 0, 1]);
    expect(rr.reasons).toEqual([0, 1, 2, 3, 4, 5].map((k) => `round-robin[${k}]`));
    const ab = runScenario(makeRoutingPolicy('always-busiest', opts(null, null)), 12, 4, true);
    expect(ab.targets).toEqual(targets('1,0,0,1,0,3,2,0,0,0,0,0'));
    expect(ab.reasons.slice(0, 6)).toEqual([4, 3, 7, 6, 5, 6].map((l) => `always-busiest (load=${l})`));
  });

  it('weighted reason rounds an exact tie half to even', () => {
    const p = makeRoutingPolicy('weighted', opts([{ name: 'queue-depth', weight: 1 }, { name: 'kv-utilization', weight: 1 }], null));
    const d = p.route(makeRequest('x'), { snapshots: snaps(['a', { queueDepth: 16 }], ['b', { kvUtilization: 0.375 }]), clock: 0 });
    expect(d.targetId).toBe('b');
    expect(d.reason).toBe('weighted-scoring (score=0.812)');
    expect(d.scores?.get('a')).toBe(0.5);
    expect(d.scores?.get('b')).toBe(0.8125);
  });
});

describe('admission decisions match the reference', () => {
  it('token bucket (capacity 100, 7.5 tokens/s) over 30 requests 0.9 s apart', () => {
    const tb = tokenBucket(100, 7.5);
    let got = '';
    for (let i = 0; i < 30; i++) {
      const req = makeRequest('r', new Array<number>(10 + ((i * 17) % 40)).fill(0));
      got += tb.admit(req, { snapshots: [], clock: i * 900_000 }).admitted ? '1' : '0';
    }
    expect(got).toBe('111101001010100001010010101001');
  });

  it('gaie-legacy and tier-shed reasons', () => {
    const g = gaieLegacy(5, 0.8);
    const sat1 = snaps(['a', { queueDepth: 10, kvUtilization: 0.4 }], ['b', { queueDepth: 1, kvUtilization: 0.9 }]);
    expect(g.admit(makeRequest('r', [], { sloClass: 'sheddable' }), { snapshots: sat1, clock: 0 }).reason).toBe(
      'gaie-saturated: class=sheddable saturation=1.56',
    );
    // Mean 1.25 is exact in binary: %.2f keeps the even digit.
    const sat2 = snaps(['a', { queueDepth: 5 }], ['b', { queueDepth: 6 }], ['c', { queueDepth: 7 }], ['d', { queueDepth: 7 }]);
    expect(g.admit(makeRequest('r', [], { sloClass: 'batch' }), { snapshots: sat2, clock: 0 }).reason).toBe(
      'gaie-saturated: class=batch saturation=1.25',
    );
    const t = tierShed(2, 3);
    expect(t.admit(makeRequest('r'), { snapshots: snaps(['a', { queueDepth: 5, inFlightRequests: 2 }]), clock: 0 })).toEqual({
      admitted: true,
      reason: '',
    });
    const load7 = snaps(['a', { queueDepth: 1, batchSize: 1 }], ['b', { queueDepth: 5, inFlightRequests: 2 }]);
    expect(t.admit(makeRequest('r', [], { sloClass: 'batch' }), { snapshots: load7, clock: 0 }).reason).toBe(
      'tier-shed: class=batch priority=-1 < min=3 load=7',
    );
  });
});
