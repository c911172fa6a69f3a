import { describe, expect, it } from 'vitest';
import type { GpuPhysics } from '../config/catalog/gpu-physics.js';
import { createCorrectedPhysicsModel, CORRECTED_PHYSICS_DEFAULTS } from './corrected-physics.js';
import { ENGINE_PROFILES, ENGINE_PROFILE_NAMES, isEngineProfileName } from './engine-profiles.js';
import { model, req } from './test-fixtures.js';
import { stepBatchOf, type HardwareConfig } from './types.js';

/**
 * The same small dense model and GPU as corrected-physics.test.ts: d = 1024, 2 layers, 8 heads of 128, 8 KV
 * heads, SwiGLU MLP of 4096, vocabulary 1000, BF16; 100 TFLOPS and 1 TB/s with every efficiency 0.5.
 *   weight bytes = (2·(4·1024² + 3·1024·4096) + 1000·1024)·2 = 69,156,864 B → / 5e5 B/µs = 138.313728 µs
 *   (a decode step of n sequences is memory-bound while its GEMM FLOPs stay under 138 µs · 5e7 FLOP/µs).
 */
const tiny = model({ numLayers: 2, hiddenDim: 1024, numHeads: 8, numKVHeads: 8, intermediateDim: 4096, vocabSize: 1000 });
const physics: GpuPhysics = {
  efficiency: { gemm: 0.5, attention: 0.5, weightRead: 0.5, kvRead: 0.5 },
  interconnect: {
    gpusPerNode: 8,
    intraNode: { kind: 'test-link', small: { latencyUs: 10, busBandwidthGBs: 50 }, large: { latencyUs: 40, busBandwidthGBs: 400 } },
    interNode: { kind: 'test-net', small: { latencyUs: 30, busBandwidthGBs: 5 }, large: { latencyUs: 60, busBandwidthGBs: 20 } },
  },
};
const gpu: HardwareConfig = { TFlopsPeak: 100, TFlopsFP8: 0, BwPeakTBs: 1, mfuPrefill: 0, mfuDecode: 0, MemoryGiB: 80, physics };

function stepUnder(engine: keyof typeof ENGINE_PROFILES, batch: ReturnType<typeof req>[]): number {
  const m = createCorrectedPhysicsModel({ model: tiny, hardware: gpu, tp: 1, coefficients: ENGINE_PROFILES[engine].overheads });
  return m.stepTime(stepBatchOf(batch));
}

describe('engine profiles (hand-computed step times)', () => {
  it('vllm-v1 is corrected-physics as shipped: its overheads are the defaults', () => {
    const v1 = ENGINE_PROFILES['vllm-v1'];
    expect(v1.overheads).toEqual({ step_us: CORRECTED_PHYSICS_DEFAULTS.step_us, request_us: CORRECTED_PHYSICS_DEFAULTS.request_us, frontend_us: CORRECTED_PHYSICS_DEFAULTS.frontend_us });
    expect(v1.schedulingMode).toBe('async');
    expect(ENGINE_PROFILES['vllm-v0'].schedulingMode).toBe('prefill-first');
    expect(ENGINE_PROFILE_NAMES).toEqual(['vllm-v1', 'vllm-v0']);
    expect(isEngineProfileName('vllm-v0')).toBe(true);
    expect(isEngineProfileName('vllm-v2')).toBe(false);
    expect(isEngineProfileName('toString')).toBe(false);
  });

  it('vllm-v0: 4,000 µs + 80 µs per sequence from the public figures (4 ms bubble; 20 ms at 200 sequences)', () => {
    const { step_us, request_us } = ENGINE_PROFILES['vllm-v0'].overheads;
    // The line through (batch → 0, 4 ms) and (200 sequences, 20 ms): slope (20,000 − 4,000) / 200 = 80 µs.
    expect(step_us).toBe(4000);
    expect((20000 - step_us) / 200).toBe(request_us);
    // 8–14 ms at 50–125 running sequences (the range the issue measured on A100).
    expect(step_us + 50 * request_us).toBe(8000);
    expect(step_us + 125 * request_us).toBe(14000);
  });

  it('the same two-decode batch: physics 144.867328 µs, plus 838 + 2·8 (V1) or 4,000 + 2·80 (V0)', () => {
    // Weights 138.313728 µs; KV of 400 tokens × 2 layers × 2 × 128 × 8 heads × 2 B = 3,276,800 B / 5e5 = 6.5536 µs.
    const batch = [req(50, 100, 100, 1), req(50, 300, 300, 1)];
    expect(stepUnder('vllm-v1', batch)).toBe(Math.trunc(144.867328 + 838 + 16)); // 998
    expect(stepUnder('vllm-v0', batch)).toBe(Math.trunc(144.867328 + 4000 + 160)); // 4304
  });

  it('a 64-sequence decode batch: V0 costs 4,000 + 5,120 µs of CPU against V1\'s 838 + 512', () => {
    // 64 decodes at context 100: weights 138.313728 µs and GEMM FLOPs 64 · 2 · 34,578,432 / 5e7 = 88.52078592 µs,
    // near the roofline's ridge: RIDGE · (88.52078592 + 138.313728) = 0.7 · 226.83451392 = 158.784159744 µs;
    // KV 6,400 tokens × 8,192 B = 52,428,800 B / 5e5 = 104.8576 µs; physics 263.641759744 µs.
    const batch = Array.from({ length: 64 }, () => req(50, 100, 100, 1));
    expect(stepUnder('vllm-v1', batch)).toBe(Math.trunc(263.641759744 + 838 + 64 * 8)); // 1613
    expect(stepUnder('vllm-v0', batch)).toBe(Math.trunc(263.641759744 + 4000 + 64 * 80)); // 9383
    // Both profiles share the front end (no public per-request V0 figure).
    const m = createCorrectedPhysicsModel({ model: tiny, hardware: gpu, tp: 1, coefficients: ENGINE_PROFILES['vllm-v0'].overheads });
    expect(m.queueingTime(batch[0]!)).toBe(9030);
  });
});
