/**
 * `blis search`: a whole-policy search on a small budget improves a poor start (the suite's FCFS default) on
 * held-out seeds; --template narrows it to one template; racing adds seeds only to undecided comparisons; the
 * best bundle is an object that --policy-config and blis evaluate take as it is.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../cli/main.js';
import { candidateFromBundle } from '../candidate.js';
import { evaluateCandidate, knownPolicyCandidate } from '../evaluate.js';
import { findSuite } from '../suites.js';
import type { Candidate, Suite } from '../types.js';
import { proveOnHoldout } from './proof.js';
import { Racer } from './race.js';
import { searchPolicies } from './search.js';
import { searchSpace } from './space.js';

const suiteOf = (name: string): Suite => findSuite(name) as Suite;

async function cli(argv: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main([...argv], { stdout: (t) => (out += t), warn: (t) => (err += t), error: (t) => (err += t) });
  return { code, out, err };
}

function expectUsage(r: { code: number; err: string }, message: RegExp): void {
  expect(r.code).toBe(2);
  expect(r.err).toMatch(message);
}

describe('search space', () => {
  it('searches the control points the suite leaves open and its scenarios use', () => {
    expect(searchSpace(suiteOf('scheduling-slo-mix')).points).toEqual(['admission', 'priority', 'routing', 'scheduler']);
    expect(searchSpace(suiteOf('autoscale-diurnal')).points).toContain('autoscale');
    expect(searchSpace(suiteOf('pd-long-prompts')).points).toContain('disaggregation');
    expect(searchSpace(suiteOf('routing-prefix-heavy')).points).not.toContain('autoscale');
    expect(searchSpace(suiteOf('scheduling-slo-mix'), { template: 'priority_aging' }).points).toEqual(['scheduler']);
    expect(() => searchSpace(suiteOf('scheduling-slo-mix'), { points: ['autoscale'] })).toThrow(/autoscale cannot be searched on suite scheduling-slo-mix: no scenario uses it/);
  });
});

describe('whole-policy search', () => {
  it('improves the suite\'s poor default on held-out seeds, with a small budget, and proves it per objective', async () => {
    const suite = suiteOf('scheduling-slo-mix');
    const evaluate = (c: Candidate, o: Parameters<typeof evaluateCandidate>[2]): ReturnType<typeof evaluateCandidate> => evaluateCandidate(c, suite, o);
    const r = await searchPolicies(suite, { budget: 8, exploreShare: 0.4, seed: 1 }, evaluate);
    expect(r.mode).toBe('whole-policy');
    expect(r.evaluations).toBe(8);
    expect(r.best.combined_score).toBeGreaterThan(r.start.combined_score + 0.05);
    // Several control points were tried, templates and trees.
    const tried = new Set(r.history.flatMap((h) => [...h.policy.matchAll(/(\w+)=/g)].map((m) => m[1])));
    expect([...tried].filter((p) => ['admission', 'priority', 'routing', 'scheduler'].includes(p as string)).length).toBeGreaterThanOrEqual(3);
    const proof = await proveOnHoldout(suite, r.candidates.start, r.candidates.best, evaluate);
    expect(proof.significant).toBe(true);
    expect(proof.improvement.ci95?.[0]).toBeGreaterThan(0);
    // Start = the suite's defaults = its baseline: both comparisons agree, and critical-class latency improved.
    const crit = proof.versus_baseline?.objectives['critical_ttft_p99_ms'];
    expect(crit?.better).toBe(true);
    expect(crit?.difference.ci95?.[1]).toBeLessThan(0);
    expect(proof.versus_start?.combined_score.difference.mean).toBeCloseTo(proof.improvement.mean, 12);
  }, 300_000);

  it('--template narrows the search to one template and starts from --start', async () => {
    const r = await cli(['search', '--template', 'weighted_affinity_routing', '--suite', 'routing-prefix-heavy', '--budget', '4', '--seed', '3', '--quiet',
      '--start', 'cache_affinity_weight=0,queue_depth_weight=0,kv_utilization_weight=0,load_balance_weight=1']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as { mode: string; control_points: string[]; start: { parameters: Record<string, number> }; best: { bundle: Record<string, unknown>; parameters: Record<string, number> }; holdout: { significant: boolean; verdict: string } };
    expect(j.mode).toBe('template');
    expect(j.control_points).toEqual(['routing']);
    expect(j.start.parameters['load_balance_weight']).toBe(1);
    expect(j.best.bundle['routing']).toMatchObject({ type: 'parameterized', template: 'weighted_affinity_routing' });
    expect(j.holdout.significant).toBe(true);
    expect(j.holdout.verdict).toMatch(/^the best beats the start on the held-out seeds by \+0\.\d{4} \(95% CI/);
  }, 300_000);

  it('a search that finds nothing says so; the best bundle runs as it is printed', async () => {
    const r = await cli(['search', '--suite', 'routing-prefix-heavy', '--budget', '1', '--quiet']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as { best: { bundle: Record<string, unknown>; combined_score: number }; holdout: { significant: boolean; verdict: string } };
    expect(j.holdout.significant).toBe(false);
    expect(j.holdout.verdict).toMatch(/^no significant improvement on the held-out seeds: \+0\.0000/);
    const dir = mkdtempSync(path.join(tmpdir(), 'blis-search-'));
    try {
      const f = path.join(dir, 'best.json');
      writeFileSync(f, JSON.stringify(j.best.bundle));
      const e = await cli(['evaluate', '--candidate', f, '--suite', 'routing-prefix-heavy', '--quiet']);
      expect(e.code).toBe(0);
      expect((JSON.parse(e.out) as { error?: unknown }).error).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);

  it('bad flags are one clear error', async () => {
    expectUsage(await cli(['search', '--suite', 'routing-prefix-heavy', '--rungs', '4,2']), /--rungs must be increasing/);
    expectUsage(await cli(['search', '--suite', 'routing-prefix-heavy', '--points', 'routing,nope']), /--points: unknown control point "nope"/);
    expectUsage(await cli(['search', '--suite', 'routing-prefix-heavy', '--points', 'autoscale']), /no scenario uses it/);
    expectUsage(await cli(['search', '--suite', 'routing-prefix-heavy', '--start', 'd=2']), /give --template too/);
    expectUsage(await cli(['search', '--suite', 'scheduling-slo-mix', '--template', 'priority_aging', '--start', 'class_weight=x']), /^--start: class_weight: class_weight must be a number in \[0, 1000000\], got "x"/);
    expectUsage(await cli(['search', '--suite', 'scheduling-slo-mix', '--template', 'priority_aging', '--start', 'class_wieght=1']), /did you mean class_weight\?/);
  });
});

describe('racing', () => {
  it('adds seeds only to undecided comparisons, and counts them', async () => {
    const suite = suiteOf('scheduling-slo-mix');
    const racer = new Racer(suite, (c, o) => evaluateCandidate(c, suite, o), [2, 4, 8], false);
    const fcfs = knownPolicyCandidate(suite.baseline as NonNullable<Suite['baseline']>);
    const bundle = (id: string, b: unknown): Candidate => candidateFromBundle(id, JSON.stringify(b));
    // Clearly worse: decided on the first rung.
    const rejectAll = await racer.race(bundle('reject-all', { admission: { policy: 'reject-all' } }), fcfs);
    expect(rejectAll).toMatchObject({ verdict: 'worse', seeds: 2 });
    // The same decisions (a priority policy under FCFS, which ignores priorities): a tie on the first rung.
    const noop = await racer.race(bundle('noop', { priority: { type: 'parameterized', template: 'slo_class_priority', parameters: {} } }), fcfs);
    expect(noop).toMatchObject({ verdict: 'tie', seeds: 2 });
    // Clearly better: decided on the first rung too.
    const good = await racer.race(bundle('priority', { scheduler: 'priority-fcfs' }), fcfs);
    expect(good).toMatchObject({ verdict: 'better', seeds: 2 });
    expect(racer.stats.seed_rungs_added).toBe(0);
    // A near-equal challenger (least-loaded routing that also weighs KV utilization) stays undecided: seeds are
    // added for it alone, up to the last rung, where the incumbent stays.
    const near = await racer.race(bundle('near', { routing: { type: 'parameterized', template: 'least_loaded_routing', parameters: { kv_weight: 1 } } }), fcfs);
    expect(near).toMatchObject({ verdict: 'undecided', seeds: 8 });
    expect(racer.stats.undecided_at_last_rung).toBe(1);
    const added = racer.rungs.indexOf(near.seeds);
    expect(racer.stats.seed_rungs_added).toBe(added);
    expect(racer.stats.comparisons).toBe(4);
    expect(Object.values(racer.stats.ended_at).reduce((a, b) => a + b, 0)).toBe(4);
    expect(racer.stats.ended_at['2']).toBe(3);
    // Each candidate paid for each run once: far fewer runs than four comparisons at 8 seeds each.
    const runs = (k: number): number => racer.runsAt(k).length;
    expect(racer.stats.runs_simulated).toBe(2 * runs(near.seeds) /* fcfs, extended for the near race, and near */ + 3 * runs(2));
    expect(racer.stats.runs_simulated).toBeLessThan(racer.stats.runs_without_racing / 2);
  }, 300_000);

  it('feasibility first: a challenger that violates the suite\'s constraints loses whatever its score', async () => {
    const suite = suiteOf('admission-bursty-tenants'); // goodput >= 0.8x the baseline's, per run
    const racer = new Racer(suite, (c, o) => evaluateCandidate(c, suite, o), [2, 4, 8], true);
    const admitAll = knownPolicyCandidate(suite.baseline as NonNullable<Suite['baseline']>);
    // Sheds every sheddable request whenever a queue forms: critical latency improves, goodput collapses.
    const shedAll = candidateFromBundle('shed', JSON.stringify({ admission: { type: 'parameterized', template: 'load_shedding_admission', parameters: { max_in_flight_per_instance: 1, protected_priority: 4 } } }));
    const r = await racer.race(shedAll, admitAll);
    expect(r.verdict).toBe('infeasible');
  }, 300_000);
});
