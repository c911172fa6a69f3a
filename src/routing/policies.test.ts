/** Behaviour of the routing policies beyond the shared contract, mostly scenarios from the reference tests. */
import { describe, expect, it } from 'vitest';
import { GoRand } from '../gocompat/go-rand.js';
import { alwaysBusiest, leastLoaded, roundRobin } from './policies.js';
import type { ScorerConfig } from './scorer-config.js';
import { makeRequest, seqTokens, snaps } from './test-fixtures.js';
import type { RoutingPolicy, RoutingSnapshot } from './types.js';
import { weighted } from './weighted.js';

const route = (p: RoutingPolicy, s: RoutingSnapshot[], id = 'r', tokens: number[] = []) => p.route(makeRequest(id, tokens), { snapshots: s, clock: 1000 });
const weightedOf = (scorers: ScorerConfig[] | null, rng: GoRand | null = null) => weighted({ scorers, blockSize: 16, rng, cachedBlocks: null });

describe('round-robin', () => {
  it('cycles in order and keeps counting across a change of instance count', () => {
    const p = roundRobin();
    const three = snaps(['i0'], ['i1'], ['i2']);
    expect([0, 1, 2, 3].map(() => route(p, three).targetId)).toEqual(['i0', 'i1', 'i2', 'i0']);
    // The counter is now 4: 4 % 2 selects the first of two, and the reason reports the call number.
    const d = route(p, snaps(['j0'], ['j1']));
    expect([d.targetId, d.reason]).toEqual(['j0', 'round-robin[4]']);
  });
});

describe('least-loaded and always-busiest', () => {
  it('choose by queue + batch + in-flight', () => {
    const s = snaps(['i0', { queueDepth: 10, batchSize: 5 }], ['i1', { queueDepth: 3, batchSize: 2 }], ['i2', { queueDepth: 7, batchSize: 8 }]);
    expect(route(leastLoaded(null), s).targetId).toBe('i1');
    // i0 and i2 both carry 15: always-busiest keeps the first.
    expect(route(alwaysBusiest(), s)).toMatchObject({ targetId: 'i0', reason: 'always-busiest (load=15)' });
    const inFlight = snaps(['i0', { queueDepth: 5, batchSize: 3, inFlightRequests: 4 }], ['i1', { queueDepth: 5, batchSize: 3 }]);
    expect(route(leastLoaded(null), inFlight)).toMatchObject({ targetId: 'i1', reason: 'least-loaded (load=8)' });
    expect(route(alwaysBusiest(), inFlight)).toMatchObject({ targetId: 'i0', reason: 'always-busiest (load=12)' });
  });

  it('least-loaded breaks a tie with one intn over the tied positions, and draws nothing otherwise', () => {
    const rng = new GoRand(42n);
    const twin = new GoRand(42n);
    const p = leastLoaded(rng);
    const noTie = snaps(['i0', { queueDepth: 10 }], ['i1', { queueDepth: 1 }], ['i2', { queueDepth: 5 }]);
    for (let i = 0; i < 50; i++) expect(route(p, noTie).targetId).toBe('i1');
    expect(rng.intn(1000)).toBe(twin.intn(1000));
    const partialTie = snaps(['a'], ['b', { queueDepth: 5 }], ['c'], ['d']);
    const tiedIds = ['a', 'c', 'd'];
    for (let i = 0; i < 20; i++) expect(route(p, partialTie).targetId).toBe(tiedIds[twin.intn(3)]);
  });
});

describe('weighted', () => {
  it('routes to the best composite and reports every instance', () => {
    const s = snaps(['i0', { queueDepth: 10, kvUtilization: 0.8 }], ['i1', { queueDepth: 2, kvUtilization: 0.2 }], ['i2', { queueDepth: 5, kvUtilization: 0.5 }]);
    const d = route(weightedOf(null), s);
    expect(d.targetId).toBe('i1');
    expect([...(d.scores?.keys() ?? [])]).toEqual(['i0', 'i1', 'i2']);
  });

  it('uses the default profile precise-prefix-cache:2, queue-depth:1, kv-utilization:1 when given none', () => {
    for (const profile of [null, []]) {
      const d = route(weightedOf(profile), snaps(['a', { queueDepth: 5, kvUtilization: 0.5 }], ['b', { queueDepth: 1, kvUtilization: 0.1 }]));
      expect(d.breakdown?.map((p) => [p.scorer, p.weight])).toEqual([
        ['precise-prefix-cache', 0.5],
        ['queue-depth', 0.25],
        ['kv-utilization', 0.25],
      ]);
      // Without a cache query precise-prefix-cache is 1.0 everywhere: a = 0.5 + 0 + 0.125, b = 0.5 + 0.25 + 0.225.
      expect(d.scores?.get('a')).toBe(0.625);
      expect(d.scores?.get('b')).toBe(0.5 + 0.25 + 0.9 * 0.25);
    }
  });

  it('normalises weights by their sum: proportional profiles give identical scores', () => {
    const s = snaps(['i0', { queueDepth: 8, kvUtilization: 0.2 }], ['i1', { queueDepth: 2, kvUtilization: 0.8 }]);
    const profile = (k: number): ScorerConfig[] => [
      { name: 'queue-depth', weight: 3 * k },
      { name: 'kv-utilization', weight: 2 * k },
      { name: 'load-balance', weight: 2 * k },
    ];
    expect(route(weightedOf(profile(2)), s).scores).toEqual(route(weightedOf(profile(1)), s).scores);
  });

  it('follows the weights when dimensions disagree', () => {
    const s = snaps(['i0', { queueDepth: 10, kvUtilization: 0.1 }], ['i1', { queueDepth: 1, kvUtilization: 0.9 }]);
    const qd = weightedOf([{ name: 'queue-depth', weight: 9 }, { name: 'kv-utilization', weight: 1 }]);
    const kv = weightedOf([{ name: 'queue-depth', weight: 1 }, { name: 'kv-utilization', weight: 9 }]);
    expect([route(qd, s).targetId, route(kv, s).targetId]).toEqual(['i1', 'i0']);
  });

  it('with load-balance alone agrees with least-loaded', () => {
    const cases = [
      snaps(['a', { queueDepth: 10, batchSize: 2 }], ['b', { queueDepth: 3, batchSize: 1 }], ['c', { queueDepth: 7 }]),
      snaps(['a', { queueDepth: 5, batchSize: 5, inFlightRequests: 3 }], ['b', { queueDepth: 5, batchSize: 5 }]),
      snaps(['a'], ['b'], ['c']),
      snaps(['a', { queueDepth: 100, batchSize: 50, inFlightRequests: 25 }], ['b', { queueDepth: 1 }]),
    ];
    for (const s of cases) expect(route(weightedOf([{ name: 'load-balance', weight: 1 }]), s).targetId).toBe(route(leastLoaded(null), s).targetId);
  });

  it('clamps each scorer value into [0, 1] before weighting', () => {
    const d = route(weightedOf([{ name: 'kv-utilization', weight: 1 }]), snaps(['over', { kvUtilization: 1.5 }], ['ok', { kvUtilization: 0.5 }]));
    expect(d.scores?.get('over')).toBe(0);
    expect(d.breakdown?.[0]?.values[0]).toBe(0);
  });

  it('observes the target chosen by the tie-break: prefix affinity sticks to where the RNG sent the prompt', () => {
    const rng = new GoRand(7n);
    const expectedFirst = new GoRand(7n).intn(4);
    const p = weightedOf([{ name: 'prefix-affinity', weight: 1 }], rng);
    const four = snaps(['i0'], ['i1'], ['i2'], ['i3']);
    const first = route(p, four, 'r1', seqTokens(64));
    expect(first.target).toBe(expectedFirst);
    const second = route(p, four, 'r2', seqTokens(64));
    expect(second.target).toBe(expectedFirst);
    expect(second.scores?.get(`i${expectedFirst}`)).toBe(1);
  });

  it('concentrates a shared prefix on one instance when prefix affinity dominates', () => {
    const p = weightedOf([{ name: 'prefix-affinity', weight: 5 }, { name: 'load-balance', weight: 1 }]);
    const s = snaps(['i0', { queueDepth: 3 }], ['i1', { queueDepth: 5 }], ['i2', { queueDepth: 7 }], ['i3', { queueDepth: 10 }]);
    const targets = new Set<string>();
    for (let i = 0; i < 40; i++) targets.add(route(p, s, `r${i}`, [...seqTokens(64), ...seqTokens(16, i * 100)]).targetId);
    expect([...targets]).toEqual(['i0']);
  });

  it('no-hit-lru through the policy: an instance that left and returns counts as never used', () => {
    const p = weighted({ scorers: [{ name: 'no-hit-lru', weight: 1 }], blockSize: 16, rng: null, cachedBlocks: () => 0 });
    const abc = snaps(['a'], ['b'], ['c']);
    expect(route(p, abc, 'r1', [1]).targetId).toBe('a');
    expect(route(p, abc, 'r2', [1]).targetId).toBe('b');
    const d3 = route(p, snaps(['b'], ['c']), 'r3', [1]);
    expect([d3.targetId, d3.scores?.get('b'), d3.scores?.get('c')]).toEqual(['c', 0, 1]);
    const d4 = route(p, abc, 'r4', [1]);
    expect([d4.targetId, ...abc.map((s) => d4.scores?.get(s.id))]).toEqual(['a', 1, 0.5, 0]);
  });

  it('rejects an invalid profile at construction', () => {
    expect(() => weightedOf([{ name: 'queue-depth', weight: 0 }])).toThrow(/finite positive/);
    expect(() => weightedOf([{ name: 'queue-depth', weight: 1 }, { name: 'queue-depth', weight: 2 }])).toThrow(/duplicate scorer/);
    expect(() => weighted({ scorers: [{ name: 'prefix-affinity', weight: 1 }], blockSize: 0, rng: null, cachedBlocks: null })).toThrow(/blockSize/);
  });
});
