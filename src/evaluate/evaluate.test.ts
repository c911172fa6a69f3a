/**
 * The evaluator: deterministic bytes, scored failures that never stop the next evaluation, Pareto ranks on a
 * hand-checked population, normalisations, suite files, and the CLI (`blis evaluate`, `blis suites`).
 */
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { candidateFromBundle, candidateFromCode, candidateFromComponents } from './candidate.js';
import { evaluateCandidate } from './evaluate.js';
import { crowdingDistances, jain, normalize, paretoRanks, scoreRun } from './fitness.js';
import { rankPopulation } from './population.js';
import { parseSuite } from './suite-file.js';
import { findSuite } from './suites.js';
import type { EvaluationResult, Suite } from './types.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const suite = findSuite('routing-prefix-heavy') as Suite;

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (t) => (out += t), warn: () => undefined, error: (t) => (err += t) });
  return { code, out, err };
}

describe('fitness', () => {
  it('normalisations keep differences and stay in [0, 1]', () => {
    expect(normalize(100, 'minimize', { kind: 'ratio', target: 200 })).toBe(1);
    expect(normalize(400, 'minimize', { kind: 'ratio', target: 200 })).toBe(0.5);
    expect(normalize(800, 'minimize', { kind: 'ratio', target: 200 })).toBe(0.25);
    expect(normalize(3000, 'maximize', { kind: 'ratio', target: 4000 })).toBe(0.75);
    expect(normalize(0.75, 'maximize', { kind: 'linear', best: 1, worst: 0.5 })).toBe(0.5);
    expect(normalize(2, 'maximize', { kind: 'linear', best: 1, worst: 0 })).toBe(1);
    expect(normalize(1000, 'minimize', { kind: 'reference_inverse' })).toBe(0.5);
    expect(normalize(NaN, 'maximize', { kind: 'linear', best: 1, worst: 0 })).toBe(0);
  });
  it('combined score is the weighted mean of the objective scores', () => {
    const r = scoreRun({ slo_attainment: 1, cache_hit_rate: 0.5 }, [
      { name: 'a', metric: 'slo_attainment', direction: 'maximize', weight: 3, normalization: { kind: 'linear', best: 1, worst: 0 } },
      { name: 'b', metric: 'cache_hit_rate', direction: 'maximize', weight: 1, normalization: { kind: 'linear', best: 1, worst: 0 } },
    ]);
    expect(r.score).toBeCloseTo((3 * 1 + 0.5) / 4, 12);
  });
  it('Jain fairness', () => {
    expect(jain([1, 1, 1])).toBe(1);
    expect(jain([1, 0])).toBe(0.5);
    expect(jain([5])).toBe(1);
    // Starving every tenant earns no fairness credit.
    expect(jain([0, 0])).toBe(0);
  });
  it('Pareto ranks and crowding on hand-checked fronts', () => {
    // Front 1: (1,0) (0,1) (0.6,0.6); front 2: (0.5,0.5) (0.2,0.9)->dominated by (0,1)? no: 0.2>0 so not dominated.
    const pts = [[1, 0], [0, 1], [0.6, 0.6], [0.5, 0.5], [0.2, 0.9], [0.1, 0.1], [0.6, 0.6]];
    expect(paretoRanks(pts)).toEqual([1, 1, 1, 2, 1, 3, 1]);
    const three = [[3, 1], [2, 2], [1, 3], [1, 1]];
    const ranks = paretoRanks(three);
    expect(ranks).toEqual([1, 1, 1, 2]);
    const cd = crowdingDistances(three, ranks);
    expect(cd[0]).toBe(Infinity);
    expect(cd[2]).toBe(Infinity);
    expect(cd[1]).toBeCloseTo(2, 12);
    expect(cd[3]).toBe(Infinity);
  });
  it('population ranking groups candidates into fronts', () => {
    const mk = (id: string, a: number, b: number): EvaluationResult => ({
      combined_score: (a + b) / 2, combined_score_se: null, combined_score_ci95: null, constraints: {}, objectives: {}, scores: { x: a, y: b }, features: {}, scenarios: [], artifacts: {},
      candidate: { id, hash: id }, suite: { name: 's', stage: 2, stages_run: [1, 2] }, blis_version: 't',
    });
    const s = { ...suite, objectives: [{ name: 'x', metric: 'x', direction: 'maximize', weight: 1, normalization: { kind: 'linear', best: 1, worst: 0 } }, { name: 'y', metric: 'y', direction: 'maximize', weight: 1, normalization: { kind: 'linear', best: 1, worst: 0 } }] } as Suite;
    const p = rankPopulation([mk('a', 1, 0), mk('b', 0.5, 0.5), mk('c', 0.4, 0.4), mk('d', 0, 1)], s);
    expect(p.fronts).toEqual([['a', 'b', 'd'], ['c']]);
  });
});

describe('evaluateCandidate', () => {
  const good = candidateFromBundle('good.yaml', 'routing: {type: parameterized, template: weighted_affinity_routing, parameters: {}}\n');
  it('a built-in suite gives one schema-shaped result, byte-identical twice', async () => {
    const a = await evaluateCandidate(good, suite, { stage: 1 });
    const b = await evaluateCandidate(good, suite, { stage: 1 });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(a.combined_score).toBeGreaterThan(0);
    expect(a.combined_score).toBeLessThanOrEqual(1);
    expect(Object.keys(a.objectives).sort()).toEqual(suite.objectives.map((o) => o.name).sort());
    for (const v of Object.values(a.features)) expect(Number.isFinite(v)).toBe(true);
    expect(a.scenarios[0]?.key).toEqual({ policy_id: 'good.yaml', workload_seed: 101, sim_seed: 101, jitter_seed: 0 });
    expect(a.artifacts['summary']).toMatch(/## Outcome/);
    expect(a.error).toBeUndefined();
  });
  it('autoscale-diurnal: GPU-hours and replicas count the autoscaled replicas while they live', async () => {
    const diurnal = findSuite('autoscale-diurnal') as Suite;
    const reference = await evaluateCandidate(candidateFromBundle('none.yaml', '{}\n'), diurnal, { stage: 1 });
    const always = await evaluateCandidate(candidateFromCode('max.js', 'function evaluate(ctx) { return ctx.maxReplicas; }', 'autoscale'), diurnal, { stage: 1 });
    expect(reference.error).toBeUndefined();
    expect(always.error).toBeUndefined();
    const m0 = reference.scenarios[0]?.metrics as Record<string, number>;
    const m1 = always.scenarios[0]?.metrics as Record<string, number>;
    // The saturation analyzer sheds replicas in the night; asking for the maximum every tick holds up to 6.
    expect(m0['replicas']).toBeGreaterThan(1);
    expect(m0['replicas']).toBeLessThan(2.5);
    expect(m1['replicas']).toBeGreaterThan(4);
    expect(m1['replicas']).toBeLessThanOrEqual(6);
    for (const m of [m0, m1]) {
      // One GPU per replica (TP 1) at 4 dollars per GPU-hour.
      expect(m['cost']).toBeCloseTo(4 * (m['gpu_hours'] as number), 9);
      expect(m['gpu_hours']).toBeGreaterThan(((m['replicas'] as number) * 60e6) / 3.6e9 * 0.9);
    }
    expect(always.scores['gpu_hours']).toBeLessThan(reference.scores['gpu_hours'] as number);
    expect(always.features['replicas_used']).toBeCloseTo(m1['replicas'] as number, 9);
  });
  it('broken candidates are scored failures with the reason, and the next evaluation works', async () => {
    const broken = [
      candidateFromCode('syntax.js', 'function route(r, s) { return s.instances[0].id', 'routing'),
      candidateFromCode('loop.js', 'function route(r, s) { for (;;) {} }', 'routing'),
      candidateFromCode('bomb.js', 'function route(r, s) { let a = [1]; for (let i = 0; i < 40; i++) a = a.concat(a); return a.length; }', 'routing'),
      candidateFromCode('target.js', 'function route(r, s) { return "nowhere"; }', 'routing'),
      candidateFromBundle('bad.yaml', 'routing: {type: parameterized, template: nope}\n'),
    ];
    for (const c of broken) {
      const r = await evaluateCandidate(c, suite, { stage: 1 });
      expect(r.combined_score, c.label).toBe(0);
      expect(r.error?.code, c.label).toMatch(/^(POLICY|SANDBOX)_/);
      expect(r.artifacts['summary'], c.label).toContain(r.error?.message ?? '');
    }
    const after = await evaluateCandidate(good, suite, { stage: 1 });
    expect(after.combined_score).toBeGreaterThan(0);
  });
  it('GEPA components: code per control point or a whole bundle', () => {
    const c = candidateFromComponents({ routing: 'function route(r, s) { return s.instances[0].id; }' }, 'x');
    expect(JSON.parse(c.bundle)).toMatchObject({ routing: { type: 'code', engine: 'fast' } });
    expect(candidateFromComponents({ bundle: 'routing: {}' }, 'y').bundle).toBe('routing: {}');
    expect(() => candidateFromComponents({ nonsense: 'x' }, 'z')).toThrow(/unknown candidate component/);
  });
});

describe('suite files', () => {
  it('parses a suite with an inline workload and reports errors at file:line:col', () => {
    const s = parseSuite(`name: mine
objectives:
  - {name: att, metric: slo_attainment, direction: maximize, normalization: {kind: linear, best: 1, worst: 0}}
stage2:
  - name: a
    seeds: [1, 2]
    config: {model: meta-llama/llama-3.1-8b-instruct, numInstances: 2}
    workload: {version: "2", seed: 1, aggregate_rate: 5, num_requests: 20, clients: [{id: c, rate_fraction: 1, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: 100}}, output_distribution: {type: constant, params: {value: 20}}}]}
    slo: {default: {ttft_ms: 500}}
`, 'mine.yaml');
    expect(s.stage2[0]?.config['workloadSpec']).toBe('workload.yaml');
    expect(s.stage2[0]?.slo['default']?.ttftMs).toBe(500);
    expect(() => parseSuite('name: x\nobjectives: []\nstage2: []\n', 'bad.yaml')).toThrow(/bad\.yaml:2:13: objectives/);
    expect(() => parseSuite('name: x\nobjectivs: []\n', 'bad.yaml')).toThrow(/bad\.yaml:1:1/);
  });
});

describe('CLI', () => {
  it('blis suites lists the built-in suites', async () => {
    const r = await cli(['suites']);
    expect(r.code).toBe(0);
    const names = (JSON.parse(r.out) as { name: string }[]).map((s) => s.name);
    expect(names).toEqual(['routing-prefix-heavy', 'admission-bursty-tenants', 'scheduling-slo-mix', 'autoscale-diurnal', 'pd-long-prompts']);
  });
  it('blis evaluate: same bytes twice and with --workers 2; a broken candidate exits 0 with an error', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blis-eval-'));
    const file = path.join(dir, 'c.yaml');
    writeFileSync(file, 'routing: {type: parameterized, template: least_loaded_routing, parameters: {}}\n');
    const a = await cli(['evaluate', '--candidate', file, '--suite', 'routing-prefix-heavy', '--stage', '1']);
    expect(a.code, a.err).toBe(0);
    const b = await cli(['evaluate', '--candidate', file, '--suite', 'routing-prefix-heavy', '--stage', '1']);
    expect(b.out).toBe(a.out);
    const w = await cli(['evaluate', '--candidate', file, '--suite', 'routing-prefix-heavy', '--stage', '1', '--workers', '2']);
    expect(w.code, w.err).toBe(0);
    expect(w.out).toBe(a.out);
    const bad = path.join(dir, 'bad.js');
    writeFileSync(bad, 'function route() { while (true) {} }\n');
    const f = await cli(['evaluate', '--candidate', bad, '--suite', 'routing-prefix-heavy', '--stage', '1']);
    expect(f.code).toBe(0);
    const doc = JSON.parse(f.out) as EvaluationResult;
    expect(doc.combined_score).toBe(0);
    expect(doc.error?.code).toBe('POLICY_RUNTIME');
    const u = await cli(['evaluate', '--candidate', file, '--suite', 'no-such-suite']);
    expect(u.code).toBe(2);
    const ws = await cli(['evaluate', '--candidate', file, '--suite', 'routing-prefix-heavy', '--watch-stdin']);
    expect(ws.code).toBe(2);
    expect(ws.err).toMatch(/--watch-stdin works with --serve/);
  }, 120_000);
});
