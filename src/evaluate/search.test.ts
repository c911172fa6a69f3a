/**
 * `blis search` improves a deliberately poor starting point on routing-prefix-heavy, and the gain holds on
 * seeds it never searched on.
 */
import { describe, expect, it } from 'vitest';
import { candidateFromBundle } from './candidate.js';
import { evaluateCandidate } from './evaluate.js';
import { searchTemplate, templateBundle, withSeedOffset } from './search.js';
import { findSuite } from './suites.js';
import { findTemplate } from '../policy/templates/catalog.js';
import type { Suite } from './types.js';

describe('search', () => {
  it('beats a prefix-blind start, on held-out seeds too', async () => {
    const suite = findSuite('routing-prefix-heavy') as Suite;
    const start = { cache_affinity_weight: 0, queue_depth_weight: 0, kv_utilization_weight: 0, load_balance_weight: 1 };
    const r = await searchTemplate(suite, { template: 'weighted_affinity_routing', budget: 6, randomShare: 0.5, seed: 3, start }, (c, o) => evaluateCandidate(c, suite, o));
    expect(r.evaluations).toBe(6);
    expect(r.best.combined_score).toBeGreaterThan(r.start.combined_score + 0.02);
    const held = withSeedOffset(suite, 1000);
    const t = findTemplate('weighted_affinity_routing')!;
    const score = async (p: Record<string, unknown>, id: string): Promise<number> =>
      (await evaluateCandidate(candidateFromBundle(id, templateBundle(t, p as Record<string, number>, id)), held, { stage: 2 })).combined_score;
    const heldStart = await score(r.start.parameters, 'start');
    const heldBest = await score(r.best.parameters, 'best');
    expect(heldBest).toBeGreaterThan(heldStart + 0.02);
  }, 180_000);
});
