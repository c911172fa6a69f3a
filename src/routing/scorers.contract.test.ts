/**
 * The scorer contract, run against every scorer in the registry (a new scorer is covered by adding it there):
 * one finite value in [0, 1] per snapshot, aligned by position; empty and single-instance lists handled;
 * deterministic for the same call sequence; ids unknown to the cache query or to the scorer's memory read as
 * "nothing cached / never seen" rather than failing.
 */
import { describe, expect, it } from 'vitest';
import type { Request } from '../domain/request.js';
import { makeScorer, SCORER_NAMES, type ScorerContext } from './scorer-registry.js';
import { makeAdapterRequest, makeRequest, scenarioSnapshots, scenarioTokens, seqTokens, snaps } from './test-fixtures.js';
import type { CachedBlocksFn, RoutingSnapshot } from './types.js';

const cachedBlocks: CachedBlocksFn = (id, req) => (id === 'a' ? 2 : id === 'c' ? 1 : 0) * (req.inputLen > 0 ? 1 : 0);
const contexts: ReadonlyArray<[string, ScorerContext]> = [
  ['with a cache query', { blockSize: 16, cachedBlocks }],
  ['without a cache query', { blockSize: 16, cachedBlocks: null }],
];

const fixtures: ReadonlyArray<[string, RoutingSnapshot[]]> = [
  [
    'mixed load',
    snaps(
      ['a', { queueDepth: 1, kvUtilization: 0.3, residentAdapters: new Set(['x']) }],
      ['b', { queueDepth: 2, batchSize: 7, kvUtilization: 0.7, inFlightRequests: 4 }],
      ['c', { queueDepth: 0, kvUtilization: 0.0, inFlightRequests: 9 }],
    ),
  ],
  ['all idle', snaps(['a'], ['b'], ['c'], ['d'])],
  ['all equal and busy', snaps(['a', { queueDepth: 5, batchSize: 5, inFlightRequests: 5, kvUtilization: 1 }], ['b', { queueDepth: 5, batchSize: 5, inFlightRequests: 5, kvUtilization: 1 }])],
  ['far past thresholds', snaps(['a', { queueDepth: 500, batchSize: 300, inFlightRequests: 1000 }], ['b', { queueDepth: 129 }])],
  ['ids the cache query does not know', snaps(['p'], ['q', { queueDepth: 3 }], ['a'])],
];

const requests: ReadonlyArray<[string, Request]> = [
  ['multi-block prompt', makeRequest('r1', seqTokens(64))],
  ['sub-block prompt', makeRequest('r2', [1, 2, 3])],
  ['empty prompt', makeRequest('r3', [])],
  ['adapter request', Object.assign(makeAdapterRequest('r4', 'x'), {})],
];

function expectValidScores(values: Float64Array, n: number): void {
  expect(values).toHaveLength(n);
  for (const v of values) {
    expect(Number.isFinite(v)).toBe(true);
    expect(v).toBeGreaterThanOrEqual(0);
    expect(v).toBeLessThanOrEqual(1);
  }
}

describe.each(SCORER_NAMES)('scorer contract: %s', (name) => {
  describe.each(contexts)('%s', (_label, ctx) => {
    it.each(fixtures)('scores every instance in [0, 1] (%s)', (_f, snapshots) => {
      const scorer = makeScorer(name, ctx);
      for (const [, req] of requests) {
        expectValidScores(scorer.score(req, snapshots), snapshots.length);
        scorer.observe?.(req, (snapshots[0] as RoutingSnapshot).id);
      }
    });

    it('handles an empty instance list', () => {
      const scorer = makeScorer(name, ctx);
      expect(scorer.score(makeRequest('r', seqTokens(32)), [])).toHaveLength(0);
    });

    it('handles a single instance', () => {
      const scorer = makeScorer(name, ctx);
      const one = snaps(['solo', { queueDepth: 3, kvUtilization: 0.5, inFlightRequests: 2 }]);
      expectValidScores(scorer.score(makeRequest('r', seqTokens(32)), one), 1);
    });

    it('is deterministic: fresh scorers fed the same sequence agree exactly', () => {
      const run = (): number[][] => {
        const scorer = makeScorer(name, ctx);
        const out: number[][] = [];
        const inFlight = [0, 0, 0];
        for (let i = 0; i < 24; i++) {
          const snapshots = scenarioSnapshots(i, inFlight, true);
          const req = makeRequest(`request_${i}`, scenarioTokens(i));
          const values = scorer.score(req, snapshots);
          out.push([...values]);
          const target = i % 3;
          scorer.observe?.(req, (snapshots[target] as RoutingSnapshot).id);
          inFlight[target] = (inFlight[target] as number) + 1;
        }
        return out;
      };
      expect(run()).toEqual(run());
    });

    it('tolerates an observed target it has never scored', () => {
      const scorer = makeScorer(name, ctx);
      const req = makeRequest('r', seqTokens(48));
      scorer.score(req, snaps(['a'], ['b']));
      expect(() => scorer.observe?.(req, 'not-in-snapshots')).not.toThrow();
      expectValidScores(scorer.score(makeRequest('r2', seqTokens(48)), snaps(['a'], ['b'])), 2);
    });
  });
});
