/**
 * Acceptance of the built-in suites (issue: a fitness signal a search can trust): on 10 held-out seed sets the
 * suites never score with, every known-bad and cheating policy scores strictly below the baseline on every set,
 * each known-good policy beats the baseline by at least 3 standard deviations of the paired difference, and no
 * policy saturates the scale. The same figures `blis suites check NAME` prints.
 * (Runs on the worker pool, dist/evaluate/worker.js: `npm test` builds first.)
 */
import { afterAll, describe, expect, it } from 'vitest';
import { EvaluationPool } from './pool.js';
import { checkSuite, GOOD_MARGIN_SDS, SATURATION } from './suite-check.js';
import { BUILTIN_SUITES, HOLDOUT_SETS } from './suites.js';

const pool = new EvaluationPool({ workers: 2, timeoutMs: 0 });
afterAll(async () => {
  await pool.close();
});

describe('built-in suites tell policies apart on held-out seeds', () => {
  it('every suite declares its load, baseline, a known-good policy and the cheating policies', () => {
    for (const s of BUILTIN_SUITES) {
      expect(s.load, s.name).not.toBeNull();
      expect(s.baseline, s.name).not.toBeNull();
      expect(s.knownGood.length, s.name).toBeGreaterThan(0);
      expect(s.knownBad.map((p) => p.id), s.name).toEqual(expect.arrayContaining(['reject-all', 'admit-10pct', 'delay-all', 'throws', 'always-busiest']));
      for (const sc of s.stage2) {
        expect(sc.holdoutSeeds.filter((x) => sc.seeds.includes(x)), `${s.name}/${sc.name}`).toEqual([]);
        expect(sc.holdoutSeeds.length, `${s.name}/${sc.name}`).toBeGreaterThanOrEqual(HOLDOUT_SETS * sc.seeds.length);
      }
    }
  });
  for (const suite of BUILTIN_SUITES) {
    it(suite.name, async () => {
      const r = await checkSuite(suite, HOLDOUT_SETS, (c, s, o) => pool.run(c, s, o));
      const lines = r.policies.map((p) => `${p.id} (${p.kind}): mean ${p.mean.toFixed(4)}${p.difference === undefined ? '' : `, paired difference ${p.difference.mean.toFixed(4)} sd ${p.difference.sd.toFixed(4)}, below on ${p.difference.below_sets}/${r.seed_sets}`} -> ${p.check.passed ? 'ok' : 'FAILED'}`);
      const report = `${suite.name}\n${lines.join('\n')}`;
      const base = r.policies[0];
      expect(base?.kind).toBe('baseline');
      for (const p of r.policies.slice(1)) {
        const d = p.difference;
        expect(d, report).toBeDefined();
        if (p.kind === 'good') {
          expect(d?.mean, report).toBeGreaterThan(0);
          expect(d?.mean, report).toBeGreaterThanOrEqual(GOOD_MARGIN_SDS * (d?.sd ?? Infinity));
        } else {
          expect(d?.below_sets, report).toBe(r.seed_sets);
          expect(p.mean, report).toBeLessThan(base?.mean ?? 0);
        }
      }
      expect(r.saturation.best_mean, report).toBeLessThan(SATURATION);
      expect(r.passed, report).toBe(true);
    }, 900_000);
  }
});
