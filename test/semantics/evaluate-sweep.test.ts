/**
 * `--semantics` reaches evaluation suites and sweeps: a sweep axis (or base key) selects it per point, and
 * `blis evaluate --semantics` runs every scenario of a suite in that mode. The scenario is an overloaded
 * instance where reference-differences E9 (a silent 300 s deadline) decides the outcome.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { BlisError } from '../../src/domain/errors.js';
import { parseSuite, withSemantics } from '../../src/evaluate/index.js';
import type { EvaluationResult } from '../../src/evaluate/types.js';
import { loadSweep } from '../../src/sweep/file.js';
import { simulationJob } from '../../src/sweep/jobs.js';
import { LocalRunner } from '../../src/sweep/local.js';
import { buildRows } from '../../src/sweep/rows.js';

const OVERLOAD = 'model: meta-llama/llama-3.1-8b-instruct, rate: 200, numRequests: 400, maxNumSeqs: 1, promptTokens: 2000, promptTokensStdev: 0, outputTokens: 1000, outputTokensStdev: 0';
const noFiles = { readText: (p: string): string => {
  throw new BlisError('io', `cannot read ${p}`);
} };

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (t) => (out += t), warn: () => undefined, error: (t) => (err += t) });
  return { code, out, err };
}

describe('--semantics in sweeps and suites', () => {
  it('a sweep axis over semantics runs each point in its mode', async () => {
    const plan = await loadSweep(`base: {${OVERLOAD}}\naxes: {semantics: [reference, corrected]}\nobjectives: {timed_out_requests: minimize}\n`, 'sw.yaml', noFiles);
    expect(plan.points.map((p) => p.params)).toEqual([{ semantics: 'reference' }, { semantics: 'corrected' }]);
    const runner = new LocalRunner({ workers: 1, timeoutMs: 0 });
    const outcomes = [];
    for (const p of plan.points) outcomes.push(await runner.run(simulationJob(p.config)));
    const rows = buildRows(plan.points, outcomes);
    expect(rows[0]?.metrics['timed_out_requests']).toBeGreaterThan(0);
    expect(rows[1]?.metrics['timed_out_requests']).toBe(0);
  });

  it('a sweep refuses an unknown mode, naming the choices', async () => {
    await expect(loadSweep(`base: {${OVERLOAD}}\naxes: {semantics: [reference, fixed]}\n`, 'sw.yaml', noFiles)).rejects.toThrow(/semantics.*fixed/);
  });

  it('withSemantics sets every scenario, replacing a scenario\'s own choice', () => {
    const suite = parseSuite(`name: s
objectives: [{name: t, metric: timed_out_requests, direction: minimize, normalization: {kind: ratio, target: 1}}]
stage1: [{name: a, seeds: [1], config: {semantics: reference}}]
stage2: [{name: b, seeds: [1], config: {numInstances: 2}}]
`, 's.yaml');
    const c = withSemantics(suite, 'corrected');
    expect([...c.stage1, ...c.stage2].map((s) => s.config['semantics'])).toEqual(['corrected', 'corrected']);
    expect(suite.stage2[0]?.config['semantics']).toBeUndefined();
  });

  it('blis evaluate --semantics: the scenario runs in the chosen mode; a scenario config can choose it too; bad values exit 2', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blis-sem-'));
    const cand = path.join(dir, 'c.yaml');
    writeFileSync(cand, 'routing: {type: parameterized, template: least_loaded_routing, parameters: {}}\n');
    const suiteFile = path.join(dir, 'suite.yaml');
    const suite = (extra: string) => `name: overload
objectives: [{name: t, metric: timed_out_requests, direction: minimize, normalization: {kind: ratio, target: 1}}]
stage2: [{name: one, seeds: [1], config: {${OVERLOAD}${extra}}}]
`;
    writeFileSync(suiteFile, suite(''));
    const timedOut = (out: string): number => (JSON.parse(out) as EvaluationResult).scenarios[0]!.metrics['timed_out_requests'] as number;
    const ref = await cli(['evaluate', '--candidate', cand, '--suite', suiteFile]);
    expect(ref.code, ref.err).toBe(0);
    const cor = await cli(['evaluate', '--candidate', cand, '--suite', suiteFile, '--semantics', 'corrected']);
    expect(cor.code, cor.err).toBe(0);
    expect(timedOut(ref.out)).toBeGreaterThan(0);
    expect(timedOut(cor.out)).toBe(0);
    writeFileSync(suiteFile, suite(', semantics: corrected'));
    const own = await cli(['evaluate', '--candidate', cand, '--suite', suiteFile]);
    expect(timedOut(own.out)).toBe(0);
    const bad = await cli(['evaluate', '--candidate', cand, '--suite', suiteFile, '--semantics', 'fixed']);
    expect(bad.code).toBe(2);
    expect(bad.out).toBe('');
    expect(bad.err).toMatch(/--semantics must be reference or corrected, got "fixed"/);
  });
});
