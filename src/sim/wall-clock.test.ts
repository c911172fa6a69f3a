/**
 * The fast engine's wall-clock backstop on whole runs: a run with fast-engine code that passes its budget fails
 * with SANDBOX_BUDGET (through the library's sliced driver and through `blis run`), and a run within it gives the
 * same bytes as one without it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { BlisError } from '../domain/errors.js';
import { candidateFromBundle } from '../evaluate/candidate.js';
import { evaluateCandidate } from '../evaluate/evaluate.js';
import { parseSuite } from '../evaluate/suite-file.js';
import { simulate } from './simulate.js';

/** A routing policy that spends most of its instruction budget on every call (slow, but within the accounting). */
const BUSY = 'routing:\n  type: code\n  engine: fast\n  source: |\n    function route(request, state) { let s = 0; for (let i = 0; i < 900000; i++) s += i; return state.instances[s % state.instances.length].id; }\n';
const config = { mode: 'run' as const, model: 'meta-llama/llama-3.1-8b-instruct', hardware: 'H100', tp: 1, numInstances: 2, numRequests: 3000, rate: 50, policyConfig: 'p.yaml', files: { 'p.yaml': BUSY } };

describe('wall-clock backstop of a run with fast-engine code', () => {
  it('the library: past its budget, SANDBOX_BUDGET naming the call, in about the budget', async () => {
    const t0 = Date.now();
    let err: unknown;
    try {
      await simulate({ ...config, policyWallClockS: 0.3 });
    } catch (e) {
      err = e;
    }
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(err).toBeInstanceOf(BlisError);
    expect((err as BlisError).code).toBe('SANDBOX_BUDGET');
    expect((err as BlisError).message).toMatch(/wall-clock backstop: (call #\d+ of the routing policy \(.*\) was stopped when the run|the run was stopped when it) passed its wall-clock budget of 300 ms.*raise policyWallClockS/);
  }, 30_000);

  it('within its budget the result is the same as without one', async () => {
    const small = { ...config, numRequests: 40, files: { 'p.yaml': BUSY.replace('900000', '1000') } };
    const a = await simulate({ ...small, policyWallClockS: 0 });
    const b = await simulate(small);
    expect(JSON.stringify(b.report)).toBe(JSON.stringify(a.report));
  }, 30_000);

  it('blis run (no driver) with the default budget runs as before', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blis-wall-'));
    const file = path.join(dir, 'p.yaml');
    writeFileSync(file, BUSY.replace('900000', '1000'));
    let out = '';
    const code = await main(['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1', '--num-instances', '2', '--num-requests', '40', '--rate', '50', '--policy-config', file], { stdout: (s) => void (out += s), warn: () => undefined, error: () => undefined });
    expect(code).toBe(0);
    expect(out).toContain('simulation_metrics');
  }, 30_000);

  it('blis evaluate: a run past the budget fails the evaluation with EVAL_TIMEOUT (never cached), not SANDBOX_BUDGET', async () => {
    const suite = parseSuite(`name: wall
objectives:
  - {name: attainment, metric: slo_attainment, direction: maximize, normalization: {kind: linear, best: 1, worst: 0}}
stage2:
  - {name: a, seeds: [1], config: {model: meta-llama/llama-3.1-8b-instruct, hardware: H100, tp: 1, numInstances: 2, numRequests: 3000, rate: 50}}
`, 'wall.yaml');
    const r = await evaluateCandidate(candidateFromBundle('busy.yaml', BUSY), suite, { wallClockMs: 300 });
    expect(r.error?.code).toBe('EVAL_TIMEOUT');
    expect(r.error?.message).toMatch(/wall-clock backstop/);
  }, 30_000);

  it("a program's top level (run at compile time) is under the backstop too", async () => {
    const top = 'routing:\n  type: code\n  engine: fast\n  source: |\n    let s = 0; for (let i = 0; i < 900000; i++) s += i;\n    function route(request, state) { return state.instances[0].id; }\n';
    let err: unknown;
    try {
      await simulate({ ...config, numRequests: 5, policyWallClockS: 0.001, files: { 'p.yaml': top } });
    } catch (e) {
      err = e;
    }
    expect((err as BlisError).code).toBe('SANDBOX_BUDGET');
    expect((err as BlisError).message).toMatch(/^fast engine: routing policy \(.*\), its top level: wall-clock backstop: .*budget of 1 ms.*raise policyWallClockS/);
  });
});
