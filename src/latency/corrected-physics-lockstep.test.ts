/** corrected-physics' price of one rank of a lockstep DP group (instance/lockstep.ts): DP padding, dummy passes. */
import { describe, expect, it } from 'vitest';
import { GPU_CATALOG } from '../config/catalog/hardware.js';
import { GPU_PHYSICS } from '../config/catalog/gpu-physics.js';
import { CORRECTED_PHYSICS_COEFFICIENTS, createCorrectedPhysicsModel } from './corrected-physics.js';
import { model, req, times } from './test-fixtures.js';
import { stepBatchOf, type HardwareConfig, type StepBatch } from './types.js';

const h100: HardwareConfig = { ...GPU_CATALOG.H100, physics: GPU_PHYSICS.H100! };
const moe = model({ numLocalExperts: 8, numExpertsPerTok: 2, moeExpertFFNDim: 14336 });
const K = CORRECTED_PHYSICS_COEFFICIENTS.length;
const REQUEST = CORRECTED_PHYSICS_COEFFICIENTS.indexOf('request_us');
const EMPTY = stepBatchOf([]);

const dp2 = createCorrectedPhysicsModel({ model: moe, hardware: h100, tp: 2, dp: 2 });

/** The untruncated step time of `b` padded to `padTo` (the fit's gradient: Σ c·g). */
function exact(b: StepBatch, padTo: number): number {
  return dp2.linear!.stepGradientPadded!(b, padTo, new Float64Array(K));
}

/** A chunk of `p` prompt tokens at context 0 of a longer prompt: no LM-head sample, no KV read. */
const chunk = (p: number): StepBatch => stepBatchOf([req(p + 1000, 10, 0, p)]);

describe('corrected-physics: a rank of a lockstep DP group', () => {
  it('prices lockstep only for a MoE model at DP > 1 (vLLM couples a dense model\'s ranks not at all)', () => {
    expect(dp2.lockstep).toBeDefined();
    expect(createCorrectedPhysicsModel({ model: moe, hardware: h100, tp: 2, dp: 1 }).lockstep).toBeUndefined();
    expect(createCorrectedPhysicsModel({ model: model(), hardware: h100, tp: 1, dp: 2 }).lockstep).toBeUndefined();
  });

  it('padding to the rank\'s own count (or none) is the independent price; an empty batch unpadded costs 1', () => {
    const decodes = stepBatchOf(times(16, () => req(500, 100, 600, 1)));
    const mixed = stepBatchOf([...times(8, () => req(500, 100, 600, 1)), req(3000, 10, 0, 1024)]);
    for (const b of [decodes, mixed, chunk(512)]) {
      expect(dp2.lockstep!.tokens(b)).toBe(Array.from(b.newTokens).reduce((s, t) => s + t, 0));
      expect(dp2.lockstep!.stepTime(b, 0)).toBe(dp2.stepTime(b));
      expect(dp2.lockstep!.stepTime(b, dp2.lockstep!.tokens(b))).toBe(dp2.stepTime(b));
    }
    expect(dp2.lockstep!.stepTime(EMPTY, 0)).toBe(1);
  });

  it('a dummy pass padded to P is a P-token forward (projections, MoE over dp × P, collectives) without its attention and request', () => {
    // chunk(P) − dummy(P) = request_us + causal attention of P queries over themselves, quadratic: L·4·h·d·P(P+1)/2 / rate.
    const c = dp2.linear!.coefficients;
    const attention = (p: number): number => exact(chunk(p), p) - exact(EMPTY, p) - c[REQUEST]!;
    for (const p of [256, 1024]) {
      expect(attention(2 * p) / attention(p)).toBeCloseTo((2 * p * (2 * p + 1)) / (p * (p + 1)), 9);
    }
    // The dummy's gradient has one step overhead and no request or KV read.
    const g = new Float64Array(K);
    dp2.linear!.stepGradientPadded!(EMPTY, 512, g);
    expect([g[CORRECTED_PHYSICS_COEFFICIENTS.indexOf('step_us')], g[REQUEST], g[CORRECTED_PHYSICS_COEFFICIENTS.indexOf('kv_read')]]).toEqual([1, 0, 0]);
    expect(dp2.lockstep!.stepTime(EMPTY, 512)).toBe(Math.trunc(exact(EMPTY, 512)));
  });

  it('a decoding rank next to a 2,048-token prefill rank is priced on the padded forward: its step grows with the padding', () => {
    const decodes = stepBatchOf(times(8, () => req(500, 100, 600, 1)));
    const alone = dp2.stepTime(decodes);
    const padded = dp2.lockstep!.stepTime(decodes, 2048);
    // The extra is exactly the dummy's growth from 8 to 2048 tokens (the padded terms), the decode's own terms unchanged.
    expect(padded - alone).toBe(Math.trunc(exact(decodes, 2048)) - Math.trunc(exact(decodes, 8)));
    expect(exact(decodes, 2048) - exact(decodes, 8)).toBeCloseTo(exact(EMPTY, 2048) - exact(EMPTY, 8), 6);
    expect(padded).toBeGreaterThan(3 * alone);
  });
});
