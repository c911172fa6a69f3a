/** Counterfactual regret, with the reference's cases. */
import { describe, expect, it } from 'vitest';
import { computeCounterfactual } from './counterfactual.js';
import { snaps } from './test-fixtures.js';

const scoreMap = (o: Record<string, number>) => new Map(Object.entries(o));

describe('computeCounterfactual', () => {
  it('ranks by policy score, keeps the top k with their load figures, and measures regret', () => {
    const s = snaps(['i_0', { queueDepth: 5, batchSize: 2, kvUtilization: 0.3 }], ['i_1', { queueDepth: 1, kvUtilization: 0.1, freeKVBlocks: 7 }], ['i_2', { queueDepth: 3, batchSize: 1, kvUtilization: 0.5 }]);
    const { candidates, regret } = computeCounterfactual('i_2', scoreMap({ i_0: 0.4, i_1: 0.9, i_2: 0.6 }), s, 2);
    expect(candidates).toEqual([
      { instanceId: 'i_1', score: 0.9, queueDepth: 1, batchSize: 0, inFlightRequests: 0, kvUtilization: 0.1, freeKVBlocks: 7 },
      { instanceId: 'i_2', score: 0.6, queueDepth: 3, batchSize: 1, inFlightRequests: 0, kvUtilization: 0.5, freeKVBlocks: 0 },
    ]);
    expect(regret).toBe(0.9 - 0.6);
  });

  it('has zero regret when the chosen instance is the best', () => {
    expect(computeCounterfactual('i_0', scoreMap({ i_0: 0.8, i_1: 0.2 }), snaps(['i_0'], ['i_1']), 2).regret).toBe(0);
  });

  it('without scores ranks by −EffectiveLoad, in-flight included', () => {
    const s = snaps(['i_0', { queueDepth: 10, batchSize: 5 }], ['i_1', { queueDepth: 1 }], ['i_2', { queueDepth: 3, batchSize: 2 }]);
    const r = computeCounterfactual('i_0', null, s, 3);
    expect(r.candidates?.map((c) => [c.instanceId, c.score])).toEqual([['i_1', -1], ['i_2', -5], ['i_0', -15]]);
    expect(r.regret).toBe(14);
    const f = computeCounterfactual('i_0', null, snaps(['i_0', { queueDepth: 5, batchSize: 3, inFlightRequests: 4 }], ['i_1', { queueDepth: 5, batchSize: 3 }]), 2);
    expect(f.candidates?.map((c) => [c.instanceId, c.inFlightRequests])).toEqual([['i_1', 0], ['i_0', 4]]);
    expect(f.regret).toBe(4);
  });

  it('clamps k, breaks score ties by id, and reads a missing score as 0', () => {
    expect(computeCounterfactual('i_1', scoreMap({ i_0: 0.8, i_1: 0.3 }), snaps(['i_0'], ['i_1']), 10).candidates).toHaveLength(2);
    expect(computeCounterfactual('i_b', scoreMap({ i_a: 0.5, i_b: 0.5 }), snaps(['i_b'], ['i_a']), 2).candidates?.[0]?.instanceId).toBe('i_a');
    const r = computeCounterfactual('x', scoreMap({ y: 0.25 }), snaps(['x'], ['y']), 2);
    expect([r.candidates?.map((c) => c.score), r.regret]).toEqual([[0.25, 0], 0.25]);
  });

  it('returns nothing for k <= 0, no instances, or a chosen id not among them', () => {
    const none = { candidates: null, regret: 0 };
    expect(computeCounterfactual('i_0', null, snaps(['i_0']), 0)).toEqual(none);
    expect(computeCounterfactual('i_0', null, [], 3)).toEqual(none);
    expect(computeCounterfactual('zz', null, snaps(['i_0']), 3)).toEqual(none);
  });
});
