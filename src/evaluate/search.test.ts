/**
 * `blis search` improves a deliberately poor starting point on routing-prefix-heavy, and the gain holds on
 * seeds it never searched on.
 */
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
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
  it('blis search proves its best on the suite\'s held-out seeds, in pairs, and says when it found nothing', async () => {
    const search = async (budget: number): Promise<{ holdout: { significant: boolean; verdict: string; runs: number; improvement: { mean: number; ci95: number[] | null } } }> => {
      let out = '';
      const code = await main(['search', '--template', 'weighted_affinity_routing', '--suite', 'routing-prefix-heavy', '--budget', String(budget), '--seed', '3',
        '--start', 'cache_affinity_weight=0,queue_depth_weight=0,kv_utilization_weight=0,load_balance_weight=1'], { stdout: (t) => (out += t), warn: () => undefined, error: () => undefined });
      expect(code).toBe(0);
      return JSON.parse(out) as never;
    };
    const found = await search(4);
    const suite = findSuite('routing-prefix-heavy') as Suite;
    expect(found.holdout.runs).toBe(suite.stage2.reduce((a, s) => a + s.holdoutSeeds.length, 0));
    expect(found.holdout.significant).toBe(true);
    expect(found.holdout.improvement.ci95?.[0]).toBeGreaterThan(0);
    expect(found.holdout.verdict).toMatch(/^the best beats the start on the held-out seeds by \+0\.\d{4} \(95% CI/);
    // One evaluation: the best is the start, and the proof says there is nothing.
    const none = await search(1);
    expect(none.holdout.significant).toBe(false);
    expect(none.holdout.verdict).toMatch(/^no significant improvement on the held-out seeds: \+0\.0000/);
  }, 300_000);
});
