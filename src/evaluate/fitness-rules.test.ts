/**
 * The rules that make a score hard to game and its noise visible (docs/evaluate.md "How a score is made"): latency
 * objectives gated by the completed share, per-class metrics, constraints, standard errors and paired differences,
 * held-out seeds, suite defaults and fixed control points, and cheating policies losing on an overloaded scenario
 * built here from a workload spec.
 */
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { candidateFromBundle } from './candidate.js';
import { evaluateCandidate } from './evaluate.js';
import { checkConstraints, metricInfo, scoreRun } from './fitness.js';
import { estimate, t975 } from './noise.js';
import { parseConstraintSpec, parseObjectiveSpec } from './objective-spec.js';
import { checkSuite } from './suite-check.js';
import { parseSuite } from './suite-file.js';
import { holdoutSeedSet, seedsFor } from './suites.js';
import type { Objective, Scenario } from './types.js';

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (t) => (out += t), warn: (t) => (err += t), error: (t) => (err += t) });
  return { code, out, err };
}

const lin = (name: string, metric: string, direction: 'maximize' | 'minimize', weight = 1): Objective =>
  ({ name, metric, direction, weight, normalization: direction === 'maximize' ? { kind: 'linear', best: 1, worst: 0 } : { kind: 'ratio', target: 100 } });

/**
 * An overloaded two-tenant scenario (a critical chat tenant and a bursty sheddable batch tenant) on 2 instances at
 * about 1.6x what they serve; the objectives are the naive latency-heavy ones a researcher writes first.
 */
const OVERLOADED = (objectives: string, extra = '', rate = 30, n = 400): string => `name: overloaded
description: two tenants at about 1.6x capacity
stage1_threshold: 0
objectives:
${objectives}
${extra}
stage2:
  - name: overload
    seeds: [1, 2]
    holdout_seeds: [11, 12, 13, 14]
    config: {model: meta-llama/llama-3.1-8b-instruct, hardware: H100, tp: 1, numInstances: 2}
    slo: {critical: {ttft_ms: 300}, sheddable: {ttft_ms: 5000}}
    workload:
      version: "2"
      seed: 1
      aggregate_rate: ${rate}
      num_requests: ${n}
      clients:
        - {id: chat, tenant_id: acme, slo_class: critical, rate_fraction: 2, arrival: {process: poisson}, input_distribution: {type: lognormal, params: {mu: 5.5, sigma: 0.5, min: 16, max: 3000}}, output_distribution: {type: exponential, params: {mean: 128, min: 8, max: 512}}}
        - {id: scraper, tenant_id: globex, slo_class: sheddable, rate_fraction: 3, arrival: {process: gamma, cv: 6}, input_distribution: {type: gaussian, params: {mean: 3000, std_dev: 800, min: 500, max: 6000}}, output_distribution: {type: exponential, params: {mean: 256, min: 8, max: 1024}}}
`;

const NAIVE = `  - {name: ttft_p99, metric: ttft_p99_ms, direction: minimize, weight: 2, normalization: {kind: ratio, target: 200}}
  - {name: ttft_mean, metric: ttft_mean_ms, direction: minimize, weight: 2, normalization: {kind: ratio, target: 50}}
  - {name: e2e_p99, metric: e2e_p99_ms, direction: minimize, weight: 1, normalization: {kind: ratio, target: 5000}}`;

const REJECT_ALL = '{"admission": {"policy": "reject-all"}}';
const ADMIT_TENTH = JSON.stringify({ admission: { type: 'code', language: 'javascript', engine: 'fast', source: "function admit(request) { let n = 0; for (const ch of request.id) { if (ch >= '0' && ch <= '9') n = (n * 10 + Number(ch)) % 1000; } return n % 10 === 0 ? 'admit' : 'reject'; }" } });
const SLO_GATED = JSON.stringify({ admission: { type: 'parameterized', template: 'load_shedding_admission', parameters: { max_queue_depth_per_instance: 2, protected_priority: 0, overload_action: 'reject' } } });

describe('objectives count every request', () => {
  it('a latency objective scores its worst with no completed request and is scaled by the square of the completed share', () => {
    const o = [lin('p99', 'ttft_p99_ms', 'minimize')];
    const none = scoreRun({ ttft_p99_ms: 0, completed_share: 0, arrived_requests: 100 }, o);
    expect(none.score).toBe(0);
    expect(none.objectives).toEqual({});
    const half = scoreRun({ ttft_p99_ms: 50, completed_share: 0.5, arrived_requests: 100 }, o);
    expect(half.score).toBe(0.25);
    expect(half.objectives).toEqual({ p99: 50 });
    const few = scoreRun({ ttft_p99_ms: 50, completed_share: 0.03, arrived_requests: 100 }, [{ ...o[0] as Objective, minCompleted: 5 }]);
    expect(few.score).toBe(0);
  });
  it('per-class objectives count only runs where the class sent requests', () => {
    const o = [lin('crit', 'slo_attainment@critical', 'maximize', 3), lin('all', 'slo_attainment', 'maximize')];
    expect(scoreRun({ slo_attainment: 0.5, 'arrived_requests@critical': 10, 'slo_attainment@critical': 1 }, o).score).toBeCloseTo((3 + 0.5) / 4, 12);
    const absent = scoreRun({ slo_attainment: 0.5 }, o);
    expect(absent.score).toBe(0.5);
    expect(absent.scores).toEqual({ all: 0.5 });
  });
  it('metric names are checked, with a suggestion', () => {
    expect(metricInfo('ttft_p99_ms@critical')).toMatchObject({ base: 'ttft_p99_ms', cls: 'critical', latency: true, direction: 'minimize' });
    expect(metricInfo('drop_rate@sheddable')).toMatchObject({ direction: 'minimize', latency: false });
    expect(metricInfo('goodput_rps')).toMatchObject({ direction: 'maximize' });
    expect(metricInfo('ttft_p99')).toMatch(/unknown metric "ttft_p99"; did you mean "ttft_p99_ms"/);
    expect(metricInfo('cache_hit_rate@critical')).toMatch(/has no per-class value/);
    expect(metricInfo('itl_p99_ms@critical')).toMatch(/per class, inter-token latency is tpot_p99_ms/);
  });
  it('constraints scale a run by 1 - the relative shortfall', () => {
    const c = [parseConstraintSpec('goodput_rps>=0.9x'), parseConstraintSpec('drop_rate@critical<=0.1')];
    const ok = checkConstraints({ goodput_rps: 10, 'arrived_requests@critical': 5, 'drop_rate@critical': 0 }, { goodput_rps: 10 }, c);
    expect(ok.factor).toBe(1);
    const bad = checkConstraints({ goodput_rps: 4.5, 'arrived_requests@critical': 5, 'drop_rate@critical': 0.15 }, { goodput_rps: 10 }, c);
    expect(bad.checks[0]?.factor).toBeCloseTo(0.5, 12);
    expect(bad.checks[1]?.factor).toBeCloseTo(0.5, 12);
    expect(bad.factor).toBeCloseTo(0.25, 12);
    expect(bad.checks[0]).toMatchObject({ bound: 9, satisfied: false, value: 4.5 });
  });
  it('objectives and constraints parse from the command-line syntax', () => {
    expect(parseObjectiveSpec('ttft_p99_ms@critical:target=300,weight=2')).toEqual({ name: 'ttft_p99_ms@critical', metric: 'ttft_p99_ms@critical', direction: 'minimize', weight: 2, normalization: { kind: 'ratio', target: 300 } });
    expect(parseObjectiveSpec('drop_rate@sheddable').normalization).toEqual({ kind: 'linear', best: 0, worst: 1 });
    expect(() => parseObjectiveSpec('ttft_p99_ms')).toThrow(/add :target=T/);
    expect(() => parseObjectiveSpec('ttft_p99:target=3')).toThrow(/did you mean "ttft_p99_ms"/);
    expect(parseConstraintSpec('goodput_rps >= 0.95x')).toMatchObject({ metric: 'goodput_rps', kind: 'min', value: 0.95, relativeToBaseline: true });
    expect(() => parseConstraintSpec('goodput_rps > 3')).toThrow(/METRIC>=VALUE/);
  });
});

describe('noise', () => {
  it('the standard error treats scenarios as fixed and seeds as draws', () => {
    expect(t975(10)).toBe(2.228);
    expect(t975(1000)).toBeCloseTo(1.9623, 3);
    // Scenario a (weight 1): 0.4, 0.6 (var 0.02); scenario b (weight 3): 0.8, 0.8 (var 0). W = 8.
    const e = estimate([
      { scenario: 'a', weight: 1, value: 0.4 }, { scenario: 'a', weight: 1, value: 0.6 },
      { scenario: 'b', weight: 3, value: 0.8 }, { scenario: 'b', weight: 3, value: 0.8 },
    ]);
    expect(e.mean).toBeCloseTo((0.4 + 0.6 + 2.4 + 2.4) / 8, 12);
    expect(e.se).toBeCloseTo(Math.sqrt((1 / 8) ** 2 * 2 * 0.02), 12);
    expect(e.ci95?.[1]).toBeCloseTo(e.mean + 4.303 * (e.se as number), 12);
    expect(estimate([{ scenario: 'a', weight: 1, value: 0.5 }, { scenario: 'b', weight: 1, value: 0.7 }]).se).toBeNull();
  });
  it('held-out seeds are extended by a fixed rule, disjoint from the search seeds', () => {
    const s = { seeds: [1, 2], holdoutSeeds: [11, 12, 13] } as unknown as Scenario;
    expect(seedsFor(s, 'search', null)).toEqual([1, 2]);
    expect(seedsFor(s, 'search', 4)).toEqual([1, 2, 1_000_000, 1_000_002]);
    expect(seedsFor(s, 'holdout', 5)).toEqual([11, 12, 13, 1_000_001, 1_000_003]);
    expect(holdoutSeedSet(s, 0)).toEqual([11, 12]);
    expect(holdoutSeedSet(s, 1)).toEqual([13, 1_000_001]);
    const search = new Set(seedsFor(s, 'search', 50));
    expect(seedsFor(s, 'holdout', 50).some((x) => search.has(x))).toBe(false);
  });
});

describe('cheating loses on an overloaded scenario built from a workload spec', () => {
  it('reject-all and admit-10% score below the default even on latency-only objectives; an SLO-gated admission beats it', async () => {
    const suite = parseSuite(OVERLOADED(NAIVE), 'overloaded.yaml');
    const score = async (bundle: string): Promise<number> => (await evaluateCandidate(candidateFromBundle('c.json', bundle), suite)).combined_score;
    const def = await score('{}');
    expect(await score(REJECT_ALL)).toBe(0);
    expect(await score(ADMIT_TENTH)).toBeLessThan(def);
  });
  it('at 1.8x and 3x the capacity, where the default\'s latencies are 30-100x their targets, admitting 10% still loses and SLO-gating still wins', async () => {
    for (const rate of [60, 100]) {
      const suite = parseSuite(OVERLOADED(NAIVE, '', rate, 2000), 'overloaded.yaml');
      const score = async (bundle: string): Promise<number> => (await evaluateCandidate(candidateFromBundle('c.json', bundle), suite)).combined_score;
      const def = await score('{}');
      expect(await score(REJECT_ALL), `rate ${rate}`).toBe(0);
      expect(await score(ADMIT_TENTH), `rate ${rate}`).toBeLessThan(def);
      expect(await score(SLO_GATED), `rate ${rate}`).toBeGreaterThan(def);
    }
  });
  it('with class objectives, a drop-rate objective and a goodput constraint, cheating loses and SLO-gating wins', async () => {
    const objectives = `  - {name: crit, metric: slo_attainment@critical, direction: maximize, weight: 4, normalization: {kind: linear, best: 1, worst: 0}}
  - {name: crit_p99, metric: ttft_p99_ms@critical, direction: minimize, weight: 2, normalization: {kind: linear, best: 100, worst: 1000}}
  - {name: goodput, metric: goodput_rps, direction: maximize, weight: 2, normalization: {kind: ratio, target: 16}}
  - {name: shed, metric: drop_rate@sheddable, direction: minimize, weight: 1, normalization: {kind: linear, best: 0, worst: 1}}`;
    const extra = `baseline: {id: always-admit, bundle: {}}
constraints:
  - {metric: goodput_rps, min: 0.8, relative_to_baseline: true}`;
    const suite = parseSuite(OVERLOADED(objectives, extra), 'overloaded.yaml');
    const ev = (bundle: string) => evaluateCandidate(candidateFromBundle('c.json', bundle), suite);
    const def = await ev('{}');
    expect(def.baseline).toBeUndefined();
    expect(def.combined_score_se).not.toBeNull();
    const reject = await ev(REJECT_ALL);
    const tenth = await ev(ADMIT_TENTH);
    const gated = await ev(SLO_GATED);
    expect(reject.combined_score).toBe(0);
    expect(tenth.combined_score).toBeLessThan(def.combined_score);
    expect(tenth.constraints['goodput_rps >= 0.8x baseline']?.violated_runs).toBe(2);
    expect(gated.combined_score).toBeGreaterThan(def.combined_score);
    expect(gated.objectives['crit_p99']).toBeLessThan(def.objectives['crit_p99'] as number);
    // The paired difference is the difference of the combined scores, with its interval and run tally.
    expect(gated.baseline?.combined_score).toBe(def.combined_score);
    expect(gated.baseline?.difference.mean).toBeCloseTo(gated.combined_score - def.combined_score, 12);
    expect((gated.baseline?.wins ?? 0) + (gated.baseline?.losses ?? 0) + (gated.baseline?.ties ?? 0)).toBe(2);
    // Validation runs on the held-out seeds.
    const held = await evaluateCandidate(candidateFromBundle('c.json', SLO_GATED), suite, { stage: 'validate' });
    expect(held.scenarios.map((r) => r.seed)).toEqual([11, 12, 13, 14]);
    expect(held.suite.stage).toBe('validate');
    // A failed candidate reports no latency figures.
    const broken = await ev(JSON.stringify({ routing: { type: 'code', language: 'javascript', engine: 'fast', source: 'function route() { throw new Error("x"); }' } }));
    expect(broken.combined_score).toBe(0);
    expect(broken.objectives).toEqual({});
    expect(broken.error?.code).toBe('POLICY_RUNTIME');
  });
});

describe('a misspelled class is loud', () => {
  it('an objective on a class no scenario sends is a set-up error naming the classes sent', async () => {
    const suite = parseSuite(OVERLOADED(`  - {name: crit, metric: slo_attainment@critcal, direction: maximize, normalization: {kind: linear, best: 1, worst: 0}}`), 'o.yaml');
    await expect(evaluateCandidate(candidateFromBundle('c.json', '{}'), suite)).rejects.toThrow(/objective crit \(slo_attainment@critcal\) names SLO class "critcal", which no scenario sends; the scenarios send "critical", "sheddable"/);
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const path = await import('node:path');
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'blis-class-')), 'empty.json');
    writeFileSync(file, '{}');
    const r = await cli(['evaluate', '--candidate', file, '--suite', 'scheduling-slo-mix', '--objective', 'drop_rate@sheddable', '--only', 'mix@8']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/names SLO class "sheddable", which no scenario sends; the scenarios send "batch", "critical", "standard"/);
  });
});

describe('no silent override', () => {
  const fixedSuite = (config: string, extra = ''): string => `name: fixed-routing
stage1_threshold: 0
objectives:
  - {name: att, metric: slo_attainment, direction: maximize, normalization: {kind: linear, best: 1, worst: 0}}
${extra}
stage2:
  - {name: s, seeds: [1], config: {model: meta-llama/llama-3.1-8b-instruct, numInstances: 2, numRequests: 40, rate: 20${config}}}
`;
  const ROUTE = JSON.stringify({ routing: { type: 'code', language: 'javascript', engine: 'fast', source: 'function route(r, s) { return 0; }' } });
  it('a suite that fixes routing refuses a routing candidate, naming the suite and the control point', async () => {
    const suite = parseSuite(fixedSuite(', routingPolicy: least-loaded'), 'fixed.yaml');
    const r = await evaluateCandidate(candidateFromBundle('c.json', ROUTE), suite);
    expect(r.error?.code).toBe('SUITE_FIXED_CONTROL_POINT');
    expect(r.error?.message).toMatch(/suite fixed-routing fixes the routing control point \(scenario s sets routingPolicy/);
    expect((await evaluateCandidate(candidateFromBundle('c.json', '{"admission": {"policy": "always-admit"}}'), suite)).error).toBeUndefined();
  });
  it('the CLI refuses a code candidate for a fixed control point with exit 2', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const path = await import('node:path');
    const dir = mkdtempSync(path.join(tmpdir(), 'blis-fixed-'));
    writeFileSync(path.join(dir, 'suite.yaml'), fixedSuite(', routingPolicy: least-loaded'));
    writeFileSync(path.join(dir, 'route.js'), 'function route(r, s) { return 0; }');
    const r = await cli(['evaluate', '--candidate', path.join(dir, 'route.js'), '--suite', path.join(dir, 'suite.yaml')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--control-point routing: suite fixed-routing fixes the routing control point/);
    expect(r.out).toBe('');
  });
  it('defaults apply only to control points the candidate leaves unset', async () => {
    const withDefault = parseSuite(fixedSuite('', 'defaults: {routingPolicy: always-busiest}'), 'd.yaml');
    const fixed = parseSuite(fixedSuite(', routingPolicy: always-busiest'), 'f.yaml');
    const plain = candidateFromBundle('c.json', '{}');
    const a = await evaluateCandidate(plain, withDefault);
    const b = await evaluateCandidate(plain, fixed);
    expect(a.scenarios[0]?.metrics).toEqual(b.scenarios[0]?.metrics);
    const routed = await evaluateCandidate(candidateFromBundle('c.json', '{"routing": {"policy": "least-loaded"}}'), withDefault);
    expect(routed.error).toBeUndefined();
    expect(routed.scenarios[0]?.metrics['load_imbalance']).toBeLessThan(a.scenarios[0]?.metrics['load_imbalance'] as number);
  });
  it('a suite file with an unknown objective metric or a bad default is one located error', () => {
    expect(() => parseSuite(fixedSuite('').replace('metric: slo_attainment', 'metric: slo_attainmnt'), 'x.yaml')).toThrow(/x\.yaml:4:\d+: objectives\[0\]\.metric: unknown metric "slo_attainmnt"; did you mean "slo_attainment"/);
    expect(() => parseSuite(fixedSuite('', 'defaults: {numInstances: 3}'), 'x.yaml')).toThrow(/defaults\.numInstances: "numInstances" is not a policy option/);
  });
});

describe('blis suites check', () => {
  it('prints the figures and whether the suite tells its policies apart', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const path = await import('node:path');
    const dir = mkdtempSync(path.join(tmpdir(), 'blis-check-'));
    const file = path.join(dir, 'suite.yaml');
    const objectives = `  - {name: crit, metric: slo_attainment@critical, direction: maximize, weight: 4, normalization: {kind: linear, best: 1, worst: 0}}
  - {name: crit_p99, metric: ttft_p99_ms@critical, direction: minimize, weight: 2, normalization: {kind: linear, best: 100, worst: 1000}}`;
    writeFileSync(file, OVERLOADED(objectives, `baseline: {id: always-admit, bundle: {}}
known_good:
  - {id: slo-gated, bundle: ${SLO_GATED}}
known_bad:
  - {id: reject-all, kind: cheating, bundle: ${REJECT_ALL}}
  - {id: busiest, bundle: {routing: {policy: always-busiest}}}`));
    const r = await cli(['suites', 'check', file, '--seed-sets', '2', '--quiet']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out) as { passed: boolean; seed_sets: number; seeds: Record<string, number[][]>; policies: { id: string; scores: number[]; difference?: { below_sets: number; mean: number }; check: { passed: boolean } }[] };
    expect(out.seed_sets).toBe(2);
    expect(out.seeds['overload']).toEqual([[11, 12], [13, 14]]);
    expect(out.policies.map((p) => p.id)).toEqual(['always-admit', 'slo-gated', 'reject-all', 'busiest']);
    const byId = Object.fromEntries(out.policies.map((p) => [p.id, p]));
    expect(byId['reject-all']?.difference?.below_sets).toBe(2);
    expect(byId['busiest']?.check.passed).toBe(true);
    expect(byId['slo-gated']?.difference?.mean).toBeGreaterThan(0);
    // The same figures through the library.
    const lib = await checkSuite(parseSuite(OVERLOADED(objectives, 'baseline: {id: always-admit, bundle: {}}'), 's.yaml'), 2, (c, s, o) => evaluateCandidate(c, s, o));
    expect(lib.policies[0]?.scores).toEqual(byId['always-admit']?.scores);
    const huge = await cli(['evaluate', '--candidate', file, '--suite', 'routing-prefix-heavy', '--seeds', '99999999999999']);
    expect(huge.code).toBe(2);
    expect(huge.err).toMatch(/--seeds must be <= 1000/);
    expect(huge.out).toBe('');
    const emptyFile = path.join(dir, 'empty.yaml');
    writeFileSync(emptyFile, '');
    const empty = await cli(['suites', 'check', emptyFile]);
    expect(empty.code).toBe(2);
    expect(empty.err).toMatch(/empty\.yaml:1:1: suite: the suite file is empty/);
    await expect(evaluateCandidate(candidateFromBundle('c.json', '{}'), parseSuite(OVERLOADED(objectives), 's.yaml'), { seeds: 5000 })).rejects.toThrow(/above the limit of 1000/);
    const none = await cli(['suites', 'check', 'no-such-suite']);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/neither a built-in suite/);
  });
});
