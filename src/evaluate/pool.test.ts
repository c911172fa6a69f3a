/**
 * The worker pool spreads one candidate's scenarios × seeds over its workers and gives the bytes the same
 * evaluation gives in this thread: results, scores and the reflection summary built from the workers' run
 * digests. A candidate failing in one scenario is the same scored failure either way, the next candidate
 * evaluates normally, and an evaluation over its wall-clock budget, or whose worker dies, is a scored failure
 * that does not harm the next one.
 * (The pool runs the built worker, dist/evaluate/worker.js: `npm test` builds first.)
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { candidateFromBundle, candidateFromCode } from './candidate.js';
import { evaluateCandidate } from './evaluate.js';
import { EvaluationPool } from './pool.js';
import { parseSuite } from './suite-file.js';
import type { EvaluationResult } from './types.js';

const MODEL = 'model: meta-llama/llama-3.1-8b-instruct, hardware: H100, tp: 1';

/** Three stage-2 scenarios × two seeds (the middle one on 3 instances, the others on 2), with tenants and classes. */
const SUITE = `name: pool-test
description: three small scenarios, two seeds each
stage1_threshold: 0
objectives:
  - {name: attainment, metric: slo_attainment, direction: maximize, weight: 2, normalization: {kind: linear, best: 1, worst: 0}}
  - {name: p99, metric: ttft_p99_ms, direction: minimize, weight: 1, normalization: {kind: ratio, target: 100}}
  - {name: hits, metric: cache_hit_rate, direction: maximize, weight: 1, normalization: {kind: linear, best: 1, worst: 0}}
stage1:
  - {name: smoke, seeds: [1], config: {${MODEL}, numInstances: 2, numRequests: 60, rate: 20}}
stage2:
  - name: prefixes
    seeds: [1, 2]
    config: {${MODEL}, numInstances: 2, totalKvBlocks: 1200}
    workload: {version: "2", seed: 1, aggregate_rate: 60, num_requests: 150, clients: [
      {id: a, tenant_id: t1, slo_class: critical, rate_fraction: 1, arrival: {process: poisson}, prefix_group: ga, prefix_length: 512,
       input_distribution: {type: constant, params: {value: 128}}, output_distribution: {type: constant, params: {value: 32}}},
      {id: b, tenant_id: t2, slo_class: batch, rate_fraction: 1, arrival: {process: poisson}, prefix_group: gb, prefix_length: 512,
       input_distribution: {type: constant, params: {value: 256}}, output_distribution: {type: constant, params: {value: 64}}}]}
    slo: {critical: {ttft_ms: 80}, batch: {ttft_ms: 400}}
  - {name: three, seeds: [1, 2], weight: 2, config: {${MODEL}, numInstances: 3, numRequests: 150, rate: 50, prefixTokens: 256}, slo: {default: {ttft_ms: 60}}}
  - {name: busy, seeds: [3, 4], config: {${MODEL}, numInstances: 2, numRequests: 150, rate: 90}, slo: {default: {ttft_ms: 60}}}
`;

const suite = parseSuite(SUITE, 'pool-test.yaml');
const good = candidateFromBundle('good.yaml', 'routing: {type: parameterized, template: weighted_affinity_routing, parameters: {}}\n');
// Least loaded by queue depth; a broken decision only on three instances (the "three" scenario), after a few routings.
const THREE_JS = `let n = 0;
function route(request, state) {
  if (state.instances.length === 3 && ++n > 20) return 'nowhere';
  let best = 0;
  for (let k = 1; k < state.instances.length; k++) if (state.instances[k].queueDepth < state.instances[best].queueDepth) best = k;
  return best;
}
`;
const failsOnThree = candidateFromCode('three.js', THREE_JS, 'routing');

const pools: EvaluationPool[] = [];
function pool(workers: number, timeoutMs = 0): EvaluationPool {
  const p = new EvaluationPool({ workers, timeoutMs });
  pools.push(p);
  return p;
}
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});

describe('EvaluationPool: one candidate over several workers', () => {
  it('a multi-scenario suite gives the same bytes on 2 workers as in this thread, summary and worst decisions included', async () => {
    const here = await evaluateCandidate(good, suite);
    expect(here.error).toBeUndefined();
    expect(here.scenarios.map((s) => `${s.scenario}@${s.seed}`)).toEqual(['prefixes@1', 'prefixes@2', 'three@1', 'three@2', 'busy@3', 'busy@4']);
    expect(here.artifacts['summary']).toMatch(/## Outcome — 6 runs: busy ×2, prefixes ×2, three ×2/);
    const done: number[] = [];
    const there = await pool(2).run(good, suite, {}, { onRunDone: (d) => done.push(d) });
    expect(JSON.stringify(there)).toBe(JSON.stringify(here));
    expect(done).toEqual([1, 2, 3, 4, 5, 6, 7]);
  }, 120_000);

  it('a candidate failing in one scenario: the same scored failure as in this thread; the next candidate evaluates normally', async () => {
    const here = await evaluateCandidate(failsOnThree, suite);
    expect(here.combined_score).toBe(0);
    expect(here.error?.code).toBe('POLICY_RUNTIME');
    expect(here.error?.message).toMatch(/nowhere/);
    expect(here.suite.stages_run).toEqual([1, 2]);
    const p = pool(2);
    const [there, next] = await Promise.all([p.run(failsOnThree, suite, {}), p.run(good, suite, {})]);
    expect(JSON.stringify(there)).toBe(JSON.stringify(here));
    expect(JSON.stringify(next)).toBe(JSON.stringify(await evaluateCandidate(good, suite)));
  }, 120_000);

  it('an evaluation over its wall-clock budget fails with EVAL_TIMEOUT, and the pool evaluates the next one normally', async () => {
    const slow = parseSuite(`name: slow
objectives:
  - {name: attainment, metric: slo_attainment, direction: maximize, normalization: {kind: linear, best: 1, worst: 0}}
stage2:
  - {name: long, seeds: [1, 2, 3, 4, 5, 6, 7, 8], config: {${MODEL}, numInstances: 2, numRequests: 100000, rate: 40}, slo: {default: {ttft_ms: 100}}}
`, 'slow.yaml');
    // Eight runs of several seconds of CPU each against a 10 s budget (30,000 requests each no longer were enough);
    // the next evaluation (three short runs) fits in it.
    const p = pool(2, 10_000);
    const t0 = Date.now();
    const r = await p.run(good, slow, { stage: 2 });
    expect(Date.now() - t0).toBeLessThan(60_000);
    expect(r.combined_score).toBe(0);
    expect(r.error?.code).toBe('EVAL_TIMEOUT');
    expect(r.artifacts['summary']).toContain('wall-clock budget of 10000 ms');
    const small = { ...suite, stage2: suite.stage2.slice(0, 1) };
    expect(JSON.stringify(await p.run(good, small, {}))).toBe(JSON.stringify(await evaluateCandidate(good, small)));
  }, 120_000);
  it('a run whose worker dies (its heap limit) fails the evaluation with EVAL_WORKER_DIED; the replacement worker evaluates the next one', async () => {
    const big = parseSuite(`name: big
objectives:
  - {name: attainment, metric: slo_attainment, direction: maximize, normalization: {kind: linear, best: 1, worst: 0}}
stage2:
  - {name: huge, seeds: [1], config: {${MODEL}, numInstances: 2, numRequests: 300000, rate: 1000}}
  - {name: small, seeds: [1], config: {${MODEL}, numInstances: 2, numRequests: 50, rate: 10}}
`, 'big.yaml');
    const p = new EvaluationPool({ workers: 2, timeoutMs: 0, maxOldGenerationSizeMb: 64 });
    pools.push(p);
    const r = await p.run(good, big, {});
    expect(r.combined_score).toBe(0);
    expect(r.error?.code).toBe('EVAL_WORKER_DIED');
    expect(r.error?.message).toMatch(/memory limit/);
    const small = { ...big, stage2: big.stage2.slice(1) };
    expect(JSON.stringify(await p.run(good, small, {}))).toBe(JSON.stringify(await evaluateCandidate(good, small)));
  }, 120_000);
});

describe('fast-engine memory kept across calls (the per-call memory account does not see it)', () => {
  it('a policy that keeps big arrays kills only its worker: EVAL_WORKER_DIED, and the pool goes on', async () => {
    const hog = candidateFromBundle('hog.yaml', `routing:
  type: code
  engine: fast
  source: |
    const keep = [];
    function route(request, state) {
      keep.push(new ([].constructor)(3e6).fill(1.5));
      return state.instances[0].id;
    }
`);
    const s = parseSuite(`name: hog
stage1_threshold: 0
objectives:
  - {name: attainment, metric: slo_attainment, direction: maximize, normalization: {kind: linear, best: 1, worst: 0}}
stage2:
  - {name: a, seeds: [1], config: {${MODEL}, numInstances: 2, numRequests: 400, rate: 20}}
`, 'hog.yaml');
    const p = new EvaluationPool({ workers: 2, timeoutMs: 0, maxOldGenerationSizeMb: 256 });
    pools.push(p);
    const t0 = Date.now();
    const r = await p.run(hog, s, {});
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(r.error?.code).toBe('EVAL_WORKER_DIED');
    expect(r.combined_score).toBe(0);
    expect((await p.run(good, s, {})).error).toBeUndefined();
  }, 60_000);
});

describe('blis evaluate --workers 2 on a multi-scenario suite file', () => {
  it('prints the same bytes as --workers 1, for a good and a failing candidate', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blis-pool-'));
    writeFileSync(path.join(dir, 'suite.yaml'), SUITE);
    writeFileSync(path.join(dir, 'good.yaml'), good.bundle);
    writeFileSync(path.join(dir, 'three.js'), THREE_JS);
    const cli = async (argv: string[]): Promise<{ code: number; out: string; err: string }> => {
      let out = '';
      let err = '';
      const code = await main(argv, { stdout: (t) => (out += t), warn: () => undefined, error: (t) => (err += t) });
      return { code, out, err };
    };
    for (const c of ['good.yaml', 'three.js']) {
      const argv = ['evaluate', '--candidate', path.join(dir, c), '--suite', path.join(dir, 'suite.yaml'), '--control-point', 'routing', '--quiet'];
      const one = await cli([...argv, '--workers', '1']);
      const two = await cli([...argv, '--workers', '2']);
      expect(one.code, one.err).toBe(0);
      expect(two.code, two.err).toBe(0);
      expect(two.out).toBe(one.out);
      const doc = JSON.parse(one.out) as EvaluationResult;
      if (c === 'three.js') expect(doc.error?.code).toBe('POLICY_RUNTIME');
      else expect(doc.scenarios).toHaveLength(6);
    }
  }, 180_000);
});
