import { describe, expect, it } from 'vitest';
import { testSetup } from '../../test/io/engine.js';
import { CORRECTED_PHYSICS_COEFFICIENTS, createCorrectedPhysicsModel } from '../latency/corrected-physics.js';
import { Request } from '../domain/request.js';
import { GoRand } from '../gocompat/go-rand.js';
import type { EngineSetup, PdEngineSetup } from '../sim/engine-setup.js';
import { simulateLinearized } from './record.js';
import { findCatalogModel } from '../config/catalog/models.js';
import { parseHFConfig } from '../latency/hf-config.js';
import { GPU_CATALOG } from '../config/catalog/hardware.js';
import { GPU_PHYSICS } from '../config/catalog/gpu-physics.js';

const mc = parseHFConfig(findCatalogModel('meta-llama/llama-3.1-8b-instruct')!.config, 'catalog');
const hw = { ...GPU_CATALOG.H100, physics: GPU_PHYSICS['H100']! };

/** 120 requests, Poisson arrivals at 8/s, prompts 50–2000 tokens, outputs 2–200 (a fixed seed). */
function requests(): Request[] {
  const rng = new GoRand(7n);
  let t = 0;
  return Array.from({ length: 120 }, (_, i) => {
    t += Math.trunc(rng.expFloat64() * 125_000);
    const input = 50 + Math.trunc(rng.float64() * 1950);
    const output = 2 + Math.trunc(rng.float64() * 198);
    return new Request(`request_${i}`, Int32Array.from({ length: input }, (_, k) => i * 10_000 + k), new Int32Array(output), t, output);
  });
}

async function setup(c: Record<string, number>, mode: 'sync' | 'async' | 'prefill-first'): Promise<EngineSetup> {
  const base = await testSetup({ latencyModel: 'corrected-physics' });
  return { ...base, schedulingMode: mode, horizon: 1e12, latency: createCorrectedPhysicsModel({ model: mc, hardware: hw, tp: 1, coefficients: c }) };
}

const C0 = { compute: 1, weight_read: 1, kv_read: 1, comm: 1, step_us: 500, request_us: 20, frontend_us: 3000 };
const vec = (c: Record<string, number>): number[] => CORRECTED_PHYSICS_COEFFICIENTS.map((n) => c[n]!);

describe('linearised simulation', () => {
  for (const mode of ['sync', 'async', 'prefill-first'] as const) {
    it(`${mode}: each request's TTFT and decode time equal gradient · coefficients (the schedule held fixed)`, async () => {
      const lin = simulateLinearized(await setup(C0, mode), requests());
      const c = vec(C0);
      let n = 0;
      for (const l of lin.requests.values()) {
        if (!l.completed) continue;
        n++;
        const dot = (row: Float64Array): number => row.reduce((s, g, i) => s + g * c[i]!, 0);
        // Step times are truncated to whole µs: the linear model is exact up to one µs per step.
        expect(Math.abs(dot(l.ttftRow) - l.ttft)).toBeLessThan(l.ttft * 0.01 + 50);
        expect(Math.abs(dot(l.decodeRow) - l.decode)).toBeLessThan(l.itlCount + 2);
      }
      expect(n).toBe(120);
    });
  }

  it('lockstep DP ranks (a MoE model at DP 2): every step records its slowest rank\'s gradient, so gradient · c is its time', async () => {
    const moe = parseHFConfig(findCatalogModel('mistralai/mixtral-8x7b-v0.1')!.config, 'catalog');
    const base = await setup(C0, 'async');
    const s: EngineSetup = { ...base, numInstances: 2, lockstepRanks: 2, latency: createCorrectedPhysicsModel({ model: moe, hardware: hw, tp: 2, dp: 2, coefficients: C0 }) };
    const lin = simulateLinearized(s, requests());
    const c = vec(C0);
    const k = c.length;
    const { values, rows } = lin.steps;
    expect(values.length).toBeGreaterThan(100);
    for (let j = 0; j < values.length; j++) {
      let t = 0;
      for (let i = 0; i < k; i++) t += rows[j * k + i]! * c[i]!;
      // The step's time is the slowest rank's, truncated to whole µs.
      expect(Math.max(1, Math.trunc(t))).toBe(values[j]);
    }
    expect([...lin.requests.values()].every((l) => l.completed)).toBe(true);
  });

  it('refuses a P/D disaggregated setup with one clear error (split requests are not linearised)', async () => {
    const pd = { roles: [1, 2] } as unknown as PdEngineSetup;
    const base = await setup(C0, 'async');
    expect(() => simulateLinearized({ ...base, pd }, requests())).toThrow(/P\/D disaggregation is not supported/);
  });

  it('predicts a small change of the coefficients as a re-simulation measures it', async () => {
    const lin = simulateLinearized(await setup(C0, 'async'), requests());
    const c1 = { ...C0, kv_read: 1.05, step_us: 520 };
    const again = simulateLinearized(await setup(c1, 'async'), requests());
    const delta = vec(c1).map((v, i) => v - vec(C0)[i]!);
    let errLinear = 0;
    let errStill = 0;
    for (const [id, l] of lin.requests) {
      const m = again.requests.get(id)!;
      const predicted = l.decode + l.decodeRow.reduce((s, g, i) => s + g * delta[i]!, 0);
      errLinear += Math.abs(predicted - m.decode) / m.decode;
      errStill += Math.abs(l.decode - m.decode) / m.decode;
    }
    // The first-order prediction is far closer than assuming nothing changed.
    expect(errLinear).toBeLessThan(errStill / 3);
  });
});
