/**
 * The fast engine's per-call wall-clock bound (--policy-call-wall-clock-s): a policy call that runs past the
 * limit, in work the instruction budget does not count, is stopped within about the limit + one slice, long
 * before the run's budget, with SANDBOX_BUDGET naming the call (EVAL_TIMEOUT under blis evaluate), through
 * `blis run`, the library and the evaluator; and cutting a run into slices changes none of its bytes.
 *
 * Nothing in the accounting is known to escape any more (BigInt is refused, the walking built-ins are charged),
 * so the escape is staged: the fast engine is wrapped to give every program a host function `__host.stall(ms)`
 * that busy-waits in the host, as a native operation the gas does not count would.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../cli/main.js';
import { BlisError } from '../domain/errors.js';
import { candidateFromBundle } from '../evaluate/candidate.js';
import { evaluateCandidate } from '../evaluate/evaluate.js';
import { parseSuite } from '../evaluate/suite-file.js';
import type { SimProgress } from './engine-setup.js';
import { simulateRun } from './run.js';
import { parseSimulationConfig, simulate } from './simulate.js';

vi.mock('../sandbox/fast.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../sandbox/fast.js')>();
  const spin = (ms: number): number => {
    const end = performance.now() + ms;
    while (performance.now() < end);
    return 1;
  };
  return {
    ...real,
    fastEngine: async () => {
      const engine = await real.fastEngine();
      return { ...engine, compile: (source: string, options: Parameters<typeof engine.compile>[1]) => engine.compile(source, { ...options, hostFunctions: { ...options.hostFunctions, stall: spin } }) };
    },
  };
});

/** Routing whose 40th call stalls for a minute outside the accounting (the run's budget is 600 s). */
const STALL = 'routing:\n  type: code\n  engine: fast\n  source: |\n    let n = 0;\n    function route(request, state) { n++; if (n === 40) __host.stall(60000); return state.instances[n % state.instances.length].id; }\n';
/** A routing policy that spends much of its instruction budget on every call (heavy calls: a clock check after each). */
const BUSY = 'routing:\n  type: code\n  engine: fast\n  source: |\n    function route(request, state) { let s = 0; for (let i = 0; i < 3000; i++) s += i; return state.instances[(s + request.inputTokens) % state.instances.length].id; }\n';
const base = { mode: 'run' as const, model: 'meta-llama/llama-3.1-8b-instruct', hardware: 'H100', tp: 1, numInstances: 2, numRequests: 200, rate: 50, policyConfig: 'p.yaml' };

/** Within this the stall is stopped: the limit (500 ms) + a slice (100 ms) + a loaded shared machine's slack. */
const STOPPED_WITHIN_MS = 8_000;

describe('per-call wall-clock bound of fast-engine code', () => {
  it('blis run: the stalled call is stopped in about the per-call limit, not the run budget; without the bound only the run budget stops it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blis-call-'));
    const file = path.join(dir, 'p.yaml');
    writeFileSync(file, STALL);
    const run = async (extra: string[]): Promise<{ code: number; err: string; ms: number }> => {
      let err = '';
      const t0 = performance.now();
      const code = await main(['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1', '--num-instances', '2', '--num-requests', '200', '--rate', '50', '--policy-config', file, ...extra], { stdout: () => undefined, warn: () => undefined, error: (s) => void (err += s) });
      return { code, err, ms: performance.now() - t0 };
    };
    const perCall = await run(['--policy-call-wall-clock-s', '0.5']);
    expect(perCall.code).not.toBe(0);
    expect(perCall.err).toMatch(/SANDBOX_BUDGET|per-call wall-clock bound/);
    expect(perCall.err).toMatch(/per-call wall-clock bound: call #40 of the routing policy \(.*\) was stopped when it ran past the per-call limit of 500 ms .*raise --policy-call-wall-clock-s/);
    expect(perCall.ms).toBeLessThan(STOPPED_WITHIN_MS);
    // Known bad: with the per-call bound off, the same call runs on until the run's budget (here 1.5 s) stops it.
    const perRun = await run(['--policy-call-wall-clock-s', '0', '--policy-wall-clock-s', '1.5']);
    expect(perRun.code).not.toBe(0);
    expect(perRun.err).toMatch(/wall-clock backstop: call #40 of the routing policy \(.*\) was stopped when the run passed its wall-clock budget of 1500 ms/);
    expect(perRun.err).not.toMatch(/per-call/);
  }, 60_000);

  it('the library: SANDBOX_BUDGET naming the call and the limit, in about the limit', async () => {
    const t0 = performance.now();
    let err: unknown;
    try {
      await simulate({ ...base, policyCallWallClockS: 0.5, files: { 'p.yaml': STALL } });
    } catch (e) {
      err = e;
    }
    expect(performance.now() - t0).toBeLessThan(STOPPED_WITHIN_MS);
    expect(err).toBeInstanceOf(BlisError);
    expect((err as BlisError).code).toBe('SANDBOX_BUDGET');
    expect((err as BlisError).message).toMatch(/call #40 of the routing policy \(.*\) was stopped when it ran past the per-call limit of 500 ms.*raise policyCallWallClockS/);
  }, 60_000);

  it("a program's top level is one call under the bound", async () => {
    const top = 'routing:\n  type: code\n  engine: fast\n  source: |\n    __host.stall(60000);\n    function route(request, state) { return state.instances[0].id; }\n';
    const t0 = performance.now();
    await expect(simulate({ ...base, numRequests: 5, policyCallWallClockS: 0.3, files: { 'p.yaml': top } })).rejects.toThrow(/its top level: per-call wall-clock bound: .*per-call limit of 300 ms/);
    expect(performance.now() - t0).toBeLessThan(STOPPED_WITHIN_MS);
  }, 60_000);

  it('blis evaluate: the stalled call fails the evaluation with EVAL_TIMEOUT (never cached)', async () => {
    const suite = parseSuite(`name: call
objectives:
  - {name: attainment, metric: slo_attainment, direction: maximize, normalization: {kind: linear, best: 1, worst: 0}}
stage2:
  - {name: a, seeds: [1], config: {model: meta-llama/llama-3.1-8b-instruct, hardware: H100, tp: 1, numInstances: 2, numRequests: 200, rate: 50, policyCallWallClockS: 0.5}}
`, 'call.yaml');
    const t0 = performance.now();
    const r = await evaluateCandidate(candidateFromBundle('stall.yaml', STALL), suite, {});
    expect(performance.now() - t0).toBeLessThan(STOPPED_WITHIN_MS);
    expect(r.error?.code).toBe('EVAL_TIMEOUT');
    expect(r.error?.message).toMatch(/call #40 of the routing policy \(.*\) was stopped when it ran past the per-call limit of 500 ms/);
  }, 60_000);

  it('cut into slices at every chunk of events and every clock check, a run gives the same bytes as without the bound', async () => {
    const env = { readText: () => BUSY, warn: () => undefined };
    // Streamed (generated workload) and materialized (with progress) paths, plain text and JSON.
    for (const extra of [{}, { outputFormat: 'json' as const }]) {
      const { values } = parseSimulationConfig({ ...base, ...extra, numRequests: 400, rate: 200 });
      const off = await simulateRun(parseSimulationConfig({ ...base, ...extra, numRequests: 400, rate: 200, policyCallWallClockS: 0 }).values, env);
      const sliced = await simulateRun(values, env, undefined, { sliceMs: 0 });
      expect(sliced.stdout).toBe(off.stdout);
      const seen: SimProgress[] = [];
      const slicedProgress = await simulateRun(values, env, undefined, { sliceMs: 0, onProgress: (p) => seen.push(p) });
      expect(slicedProgress.stdout).toBe(off.stdout);
      expect(seen.length).toBeGreaterThan(3);
    }
    // Closed-loop users (the materialized path: all requests loaded, follow-ups injected while it runs).
    for (const extra of [{}, { outputFormat: 'json' as const }]) {
      const closed = { ...base, ...extra, rate: undefined, concurrency: 4, thinkTimeMs: 50, numRequests: 120 };
      const off = await simulateRun(parseSimulationConfig({ ...closed, policyCallWallClockS: 0 }).values, env);
      const { values } = parseSimulationConfig(closed);
      expect((await simulateRun(values, env, undefined, { sliceMs: 0 })).stdout).toBe(off.stdout);
      expect((await simulateRun(values, env, undefined, { sliceMs: 0, onProgress: () => undefined })).stdout).toBe(off.stdout);
    }
    // The library's driver (slices between yields) with the bound on and off.
    const a = await simulate({ ...base, policyCallWallClockS: 0, files: { 'p.yaml': BUSY } });
    const b = await simulate({ ...base, files: { 'p.yaml': BUSY } });
    expect(JSON.stringify(b.report)).toBe(JSON.stringify(a.report));
  }, 120_000);

  it('rejects a bad limit with one line naming the flag', async () => {
    let err = '';
    const code = await main(['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--policy-call-wall-clock-s', '-1'], { stdout: () => undefined, warn: () => undefined, error: (s) => void (err += s) });
    expect(code).toBe(2);
    expect(err).toMatch(/--policy-call-wall-clock-s must be a finite number of seconds >= 0/);
  });
});
