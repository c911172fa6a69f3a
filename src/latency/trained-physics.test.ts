import { describe, expect, it } from 'vitest';
import type { Request } from '../domain/request.js';
import { LatencyConfigError } from './errors.js';
import { createTrainedPhysicsModel, type TrainedPhysicsOptions } from './trained-physics.js';
import { model, req, times } from './test-fixtures.js';
import { stepBatchOf, type HardwareConfig, type ModelConfig } from './types.js';

/**
 * Expected step times were produced by running the reference Go implementation (commit f90a1e3) on the same
 * inputs; the dense TP golden is the reference's own TestINVBCDP1_DenseStepTimeByteIdentical.
 */

/** 3 prefill requests of 128 tokens + 5 decode requests at context 266 (the reference's DP/EP batch). */
const mixed = (): Request[] => [...times(3, () => req(128, 0, 0, 128)), ...times(5, () => req(256, 10, 266, 1))];
const prefill64x512 = (): Request[] => times(64, () => req(512, 0, 0, 512));
const prefill2048 = (): Request[] => [req(2048, 0, 0, 2048)];
const decode32 = (): Request[] => times(32, () => req(512, 10, 522, 1));
/** Chunked prefill mid-prompt, a decode, and a zero-output request (counted in B, but neither phase). */
const chunked = (): Request[] => [req(1000, 50, 512, 256), req(300, 20, 310, 1), req(100, 0, 100, 1)];

const dense = model({});
const moe = model({ numLocalExperts: 8, numExpertsPerTok: 2, moeExpertFFNDim: 14336 });
const interleaved = model({
  numLayers: 48,
  hiddenDim: 5120,
  numHeads: 40,
  intermediateDim: 8192,
  moeExpertFFNDim: 8192,
  denseIntermediateDim: 16384,
  numLocalExperts: 16,
  numExpertsPerTok: 2,
  interleaveMoELayerStep: 1,
});
const testHw: HardwareConfig = { TFlopsPeak: 989.0, TFlopsFP8: 0, BwPeakTBs: 3.35, mfuPrefill: 0.55, mfuDecode: 0.3, MemoryGiB: 0 };
const h100: HardwareConfig = { TFlopsPeak: 989.5, TFlopsFP8: 1979.0, BwPeakTBs: 3.35, mfuPrefill: 0.45, mfuDecode: 0.3, MemoryGiB: 80 };

const alpha = [15563.199579, 777.3455, 45.907545];
const beta10 = [0.152128, 0.0, 1.36252915, 0.752037, 32.09546717, 4.41684444, 126.024825, 481.8613888, 0.0, 1.94710771];
const beta11 = [...beta10, 0.752037];

function step(opts: Partial<TrainedPhysicsOptions> & { model: ModelConfig }, batch: Request[]): number {
  const m = createTrainedPhysicsModel({ hardware: testHw, tp: 1, alpha, beta: beta11, ...opts });
  return m.stepTime(stepBatchOf(batch, batch.length));
}

describe('trained-physics step time (reference values)', () => {
  it.each([
    [1, 7797],
    [2, 4538],
    [4, 2909],
    [8, 2094],
  ])('dense golden: TP=%i gives %i µs', (tp, want) => {
    expect(step({ model: dense, tp, beta: beta10 }, mixed())).toBe(want);
  });

  it.each([
    [1, 11739, 8246, 7440],
    [2, 6689, 4774, 4333],
  ])('dense, 11 betas, TP=%i: long prefill / 32 decodes / chunked+zero-output', (tp, pf, dc, ch) => {
    expect([step({ model: dense, tp }, prefill2048()), step({ model: dense, tp }, decode32()), step({ model: dense, tp }, chunked())]).toEqual([
      pf,
      dc,
      ch,
    ]);
  });

  it('uses β·max(compute, kv) with 7 or 8 betas and the prefill split from 9 betas', () => {
    for (const n of [7, 8, 9]) expect(step({ model: dense, tp: 2, beta: beta10.slice(0, n) }, mixed())).toBe(4488);
  });

  it.each([
    [1, 1, '', 40562, 168424],
    [2, 1, '', 20921, 88786],
    [1, 2, '', 21432, 86440],
    [2, 2, 'allgather_reducescatter', 11333, 45866],
    [2, 2, 'deepep_low_latency', 11350, 47312],
    [4, 2, 'pplx', 6303, 27266],
  ])('uniform MoE TP=%i DP=%i backend "%s": mixed %i, 64×512 prefill %i', (tp, dp, backend, mixedWant, pfWant) => {
    const o = { model: moe, tp, dp, moeCommBackend: backend };
    expect([step(o, mixed()), step(o, prefill64x512())]).toEqual([mixedWant, pfWant]);
  });

  it('interleaved MoE at DP=2 charges dense and MoE comm, per backend family', () => {
    expect(step({ model: interleaved, tp: 2, dp: 2 }, prefill64x512())).toBe(70097);
    expect(step({ model: interleaved, tp: 2, dp: 2, moeCommBackend: 'deepep_low_latency' }, prefill64x512())).toBe(71453);
    expect(step({ model: interleaved, tp: 2, dp: 2 }, mixed())).toBe(27312);
  });

  it('uses the FP8 peak for 1-byte weights on a GPU with FP8 tensor cores', () => {
    expect(step({ model: { ...interleaved, weightBytesPerParam: 1 }, hardware: h100, tp: 2 }, mixed())).toBe(25545);
  });

  it('adds shared-expert compute and weights', () => {
    const shared = { ...moe, sharedExpertFFNDim: 2048 };
    expect([step({ model: shared, tp: 2 }, mixed()), step({ model: shared, tp: 2, dp: 2 }, mixed())]).toEqual([21296, 11684]);
  });

  it('returns 1 for an empty batch and counts only batch[0..count)', () => {
    const m = createTrainedPhysicsModel({ model: dense, hardware: testHw, tp: 1, alpha, beta: beta10 });
    expect(m.stepTime(stepBatchOf([], 0))).toBe(1);
    const b = mixed();
    expect(m.stepTime(stepBatchOf([...b, req(4096, 0, 0, 4096)], b.length))).toBe(7797);
  });

  it('exposes α0 as queueing, α1 as post-decode and α2 as per-token overheads (truncated)', () => {
    const m = createTrainedPhysicsModel({ model: dense, hardware: testHw, tp: 1, alpha, beta: beta10 });
    expect(m.queueingTime(req(100, 1, 0, 0))).toBe(15563);
    expect(m.queueingTime(req(5000, 1, 0, 0))).toBe(15563);
    expect(m.postDecodeFixedOverhead()).toBe(777);
    expect(m.outputTokenProcessingTime()).toBe(45);
  });
});

describe('trained-physics validation', () => {
  const bad = (o: Partial<TrainedPhysicsOptions>, code: string, field: string): void => {
    try {
      createTrainedPhysicsModel({ model: dense, hardware: testHw, tp: 1, alpha, beta: beta10, ...o });
    } catch (e) {
      expect(e).toBeInstanceOf(LatencyConfigError);
      expect((e as LatencyConfigError).code).toBe(code);
      expect((e as LatencyConfigError).field).toBe(field);
      return;
    }
    throw new Error('expected an error');
  };

  it('rejects short or invalid coefficient lists', () => {
    bad({ beta: [0.1, 0.2, 0.3] }, 'INVALID_COEFFICIENTS', 'beta');
    bad({ alpha: [1] }, 'INVALID_COEFFICIENTS', 'alpha');
    bad({ beta: [...beta10.slice(0, 5), -1, 0] }, 'INVALID_COEFFICIENTS', 'beta[5]');
    bad({ alpha: [Number.NaN, 0, 0] }, 'INVALID_COEFFICIENTS', 'alpha[0]');
  });

  it('rejects bad parallelism', () => {
    bad({ tp: 0 }, 'INVALID_PARALLELISM', 'tp');
    bad({ tp: 3 }, 'INVALID_PARALLELISM', 'tp');
    bad({ tp: 16 }, 'INVALID_PARALLELISM', 'tp'); // 8 KV heads
    bad({ dp: 2 }, 'INVALID_PARALLELISM', 'dp'); // dense model
  });

  it('rejects bad model and hardware facts', () => {
    bad({ model: model({ numLayers: 0 }) }, 'INVALID_MODEL_CONFIG', 'num_hidden_layers');
    bad({ model: model({ intermediateDim: 0 }) }, 'INVALID_MODEL_CONFIG', 'intermediate_size');
    bad({ model: model({ bytesPerParam: 0 }) }, 'INVALID_MODEL_CONFIG', 'torch_dtype');
    bad({ model: model({ numLocalExperts: 8, numExpertsPerTok: 0 }) }, 'INVALID_MODEL_CONFIG', 'num_experts_per_tok');
    bad({ hardware: { ...testHw, BwPeakTBs: 0 } }, 'INVALID_HARDWARE_CONFIG', 'BwPeakTBs');
    bad({ hardware: { ...testHw, TFlopsPeak: Number.POSITIVE_INFINITY } }, 'INVALID_HARDWARE_CONFIG', 'TFlopsPeak');
  });

  it('rejects an unknown MoE comm backend, naming it', () => {
    bad({ moeCommBackend: 'not-a-backend' }, 'UNKNOWN_MOE_COMM_BACKEND', 'moeCommBackend');
  });
});
