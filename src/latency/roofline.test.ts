import { describe, expect, it } from 'vitest';
import type { Request } from '../domain/request.js';
import { LatencyConfigError } from './errors.js';
import { createRooflineModel, transformerFlops } from './roofline.js';
import { model, req, times } from './test-fixtures.js';
import { stepBatchOf, type HardwareConfig, type ModelConfig } from './types.js';

/**
 * Expected step times come from running the reference Go implementation (commit f90a1e3) on the same
 * inputs, with the reference tests' fixtures (testModelConfig, testMixtralConfig, testHardwareCalib and the
 * Scout config of TestRooflineStepTime_Scout_InterleavedMoE).
 */

const llamaLike = model({ vocabSize: 128256 });
const mixtral = model({ vocabSize: 32000, numLocalExperts: 8, numExpertsPerTok: 2 });
const scoutFP8 = model({
  numLayers: 48,
  hiddenDim: 5120,
  numHeads: 40,
  intermediateDim: 8192,
  numLocalExperts: 16,
  numExpertsPerTok: 1,
  moeExpertFFNDim: 8192,
  interleaveMoELayerStep: 1,
  denseIntermediateDim: 16384,
  bytesPerParam: 1,
  weightBytesPerParam: 1,
});
const testHw: HardwareConfig = { TFlopsPeak: 989.0, TFlopsFP8: 0, BwPeakTBs: 3.35, mfuPrefill: 0.55, mfuDecode: 0.3, MemoryGiB: 80 };
const h100: HardwareConfig = { TFlopsPeak: 989.5, TFlopsFP8: 1979.0, BwPeakTBs: 3.35, mfuPrefill: 0.45, mfuDecode: 0.3, MemoryGiB: 80 };

const decode1 = (): Request[] => [req(512, 10, 512, 1)];
const mixedSmall = (): Request[] => [req(64, 10, 0, 64), req(512, 10, 512, 1)];
/** Prefill, decode, mid-prompt chunk and decode, interleaved so the prefill-then-decode summation order matters. */
const mixed2 = (): Request[] => [req(128, 10, 0, 128), req(256, 10, 256, 1), req(2048, 5, 1024, 512), req(600, 3, 601, 1)];
const chunked = (): Request[] => [req(1000, 50, 512, 256), req(300, 20, 310, 1), req(100, 0, 100, 1)];
const prefill2048 = (): Request[] => [req(2048, 0, 0, 2048)];
const decode32 = (): Request[] => times(32, () => req(512, 10, 522, 1));
const prefill64x512 = (): Request[] => times(64, () => req(512, 0, 0, 512));

function step(mc: ModelConfig, hw: HardwareConfig, tp: number, batch: Request[]): number {
  return createRooflineModel({ model: mc, hardware: hw, tp, alpha: [0, 0, 0] }).stepTime(stepBatchOf(batch, batch.length));
}

describe('roofline step time (reference values)', () => {
  it('dense model, TP=1 and TP=2', () => {
    expect([
      step(llamaLike, testHw, 1, decode1()),
      step(llamaLike, testHw, 1, mixedSmall()),
      step(llamaLike, testHw, 1, mixed2()),
      step(llamaLike, testHw, 1, chunked()),
      step(llamaLike, testHw, 2, mixed2()),
      step(llamaLike, testHw, 1, prefill2048()),
      step(llamaLike, testHw, 1, decode32()),
    ]).toEqual([3065, 3072, 12717, 4995, 6358, 40446, 3702]);
  });

  it('uniform MoE loads only the expected routed experts', () => {
    expect([
      step(mixtral, testHw, 1, decode1()),
      step(mixtral, testHw, 1, decode32()),
      step(mixtral, testHw, 1, mixed2()),
      step(mixtral, testHw, 2, prefill64x512()),
    ]).toEqual([5308, 19405, 21611, 537717]);
  });

  it('interleaved FP8 MoE uses the FP8 peak and splits MoE/dense layers', () => {
    expect([step(scoutFP8, h100, 2, mixed2()), step(scoutFP8, h100, 2, decode32()), step(scoutFP8, h100, 1, decode1())]).toEqual([
      6911, 5496, 2719,
    ]);
  });

  it('is 1 tick for an empty batch and for a batch of zero-output requests past their prompt', () => {
    const m = createRooflineModel({ model: llamaLike, hardware: testHw, tp: 1, alpha: [0, 0, 0] });
    expect(m.stepTime(stepBatchOf([], 0))).toBe(1);
    expect(m.stepTime(stepBatchOf([req(100, 0, 100, 1)], 1))).toBe(1);
  });

  it('sees only batch[0..count)', () => {
    const m = createRooflineModel({ model: llamaLike, hardware: testHw, tp: 1, alpha: [0, 0, 0] });
    expect(m.stepTime(stepBatchOf([...decode1(), ...prefill2048()], 1))).toBe(3065);
  });

  it('counts a decode step as one token whatever numNewTokens says', () => {
    expect(step(llamaLike, testHw, 1, [req(512, 10, 512, 7)])).toBe(3065);
  });

  it('uses α0 + α1·inputLen for queueing, α2 per output token, no post-decode overhead', () => {
    const m = createRooflineModel({ model: llamaLike, hardware: testHw, tp: 1, alpha: [232.46, 1.752, 3357.44] });
    expect(m.queueingTime(req(100, 1, 0, 0))).toBe(407); // trunc(232.46 + 175.2)
    expect(m.outputTokenProcessingTime()).toBe(3357);
    expect(m.postDecodeFixedOverhead()).toBe(0);
  });
});

describe('roofline FLOPs', () => {
  it('counts attention over the running context plus half the new chunk', () => {
    // One layer, d=8, H=2 (dHead=4), KV heads=2, dFF=16, 3 new tokens after 5 cached:
    // gemm = 2·3·(64+2·8·8) + 2·3·64 + 4·2·3·6·4 + 2·3·(2·8·16) = 1152 + 384 + 576 + 1536 = 3648
    // sram = 5·2·3·6 + 2·3·8 = 228
    const s = {
      d: 8, qDim: 8, L: 1, H: 2, kvH: 2, dHead: 4, dKV: 8, moeLayers: 0, denseLayers: 1,
      dFFMoE: 16, dFFDense: 16, topK: 0, experts: 0, bpp: 2, wbpp: 2, mlp: 2, shared: 0, kvPerToken: 32,
    };
    expect(transformerFlops(s, 5, 3)).toBe(3648 + 228);
    // Corrected: a third (gate) matrix adds 2·3·(8·16) = 768; a query width of 12 (3 heads of 4) adds
    // 2·3·(8·4) to the QKV and output projections each = 384; a shared expert is not counted without MoE layers.
    expect(transformerFlops({ ...s, mlp: 3 }, 5, 3)).toBe(3648 + 228 + 768);
    expect(transformerFlops({ ...s, qDim: 12 }, 5, 3)).toBe(3648 + 228 + 384);
  });
});

describe('roofline validation', () => {
  const code = (f: () => unknown): [string, string] => {
    try {
      f();
    } catch (e) {
      if (e instanceof LatencyConfigError) return [e.code, e.field];
      throw e;
    }
    return ['', ''];
  };
  const make = (mc: ModelConfig, hw: HardwareConfig, tp = 1, alpha = [0, 0, 0]) => () =>
    createRooflineModel({ model: mc, hardware: hw, tp, alpha });

  it('rejects missing dimensions, dtype, MFU and inconsistent MoE facts', () => {
    expect(code(make(model({ numHeads: 0 }), testHw))).toEqual(['INVALID_MODEL_CONFIG', 'num_attention_heads']);
    expect(code(make(model({ bytesPerParam: 0 }), testHw))).toEqual(['INVALID_MODEL_CONFIG', 'torch_dtype']);
    expect(code(make(llamaLike, { ...testHw, mfuDecode: 0 }))).toEqual(['INVALID_HARDWARE_CONFIG', 'mfuDecode']);
    expect(code(make(model({ numLocalExperts: 8 }), testHw))).toEqual(['INVALID_MODEL_CONFIG', 'num_experts_per_tok']);
    expect(code(make(model({ numLocalExperts: 4, numExpertsPerTok: 8 }), testHw))).toEqual(['INVALID_MODEL_CONFIG', 'num_experts_per_tok']);
    expect(code(make(llamaLike, { ...testHw, TFlopsFP8: -1 }))).toEqual(['INVALID_HARDWARE_CONFIG', 'TFlopsFP8']);
  });

  it('rejects tp <= 0 and bad alpha', () => {
    expect(code(make(llamaLike, testHw, 0))).toEqual(['INVALID_PARALLELISM', 'tp']);
    expect(code(make(llamaLike, testHw, 1, [0, 0]))).toEqual(['INVALID_COEFFICIENTS', 'alpha']);
    expect(code(make(llamaLike, testHw, 1, [0, -1, 0]))).toEqual(['INVALID_COEFFICIENTS', 'alpha[1]']);
  });
});
