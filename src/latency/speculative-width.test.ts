import { describe, expect, it } from 'vitest';
import { createBlackboxModel } from './blackbox.js';
import { createCorrectedPhysicsModel } from './corrected-physics.js';
import { createRooflineModel } from './roofline.js';
import { createTrainedPhysicsModel } from './trained-physics.js';
import { model, req, times } from './test-fixtures.js';
import { stepBatchOf, type HardwareConfig, type LatencyModel } from './types.js';
import type { Request } from '../domain/request.js';

/** A small dense model whose terms are easy by hand: L=2, d=64, 4 heads of 16 (dKV=64), MLP width 128. */
const tiny = model({ numLayers: 2, hiddenDim: 64, numHeads: 4, numKVHeads: 4, intermediateDim: 128, vocabSize: 1000 });
/** 1e3 FLOP/µs and 1e3 bytes/µs. */
const slowHw: HardwareConfig = { TFlopsPeak: 1e-3, TFlopsFP8: 0, BwPeakTBs: 1e-3, mfuPrefill: 0.5, mfuDecode: 0.5, MemoryGiB: 0 };

const price = (m: LatencyModel, batch: Request[]): number => m.stepTime(stepBatchOf(batch, batch.length));
/** One decode at context 100 (prompt 50, 50 tokens out so far). */
const oneDecode = (): Request[] => [req(50, 200, 100, 1)];
const decodeReq = (): Request => req(50, 200, 100, 1);

describe('speculative decoding: a decode step is priced at verify width w = K+1', () => {
  it('trained-physics, by hand: only the decode projection/MLP FLOPs and KV write traffic scale by w', () => {
    // β1 (decode compute) = β9 (decode KV) = 1, every other β 0: step = tDcCompute + tDcKv (10 betas split them).
    const beta = [0, 1, 0, 0, 0, 0, 0, 0, 0, 1];
    const tp = (w?: number): LatencyModel => createTrainedPhysicsModel({ model: tiny, hardware: slowHw, tp: 1, alpha: [0, 0, 0], beta, ...(w === undefined ? {} : { verifyWidth: w }) });
    // Per decode verifying w positions at context 100 (L=2, d=64, projWidth=2d+2dKV=256, dH=16, 4 heads):
    //   projections 2·L·w·d·256 = 65536·w;  attention 4·L·heads·ctx·dH = 51200 (one shared context read: no w);
    //   MLP L·w·6·d·128 = 98304·w;  KV bytes L·(2·dKV)·2·(ctx + w) = 512·(100 + w).
    // w=1: (65536 + 51200 + 98304)/1e3 + 512·101/1e3 = 215.04 + 51.712 = 266.752 -> 266 µs.
    // w=4: (262144 + 51200 + 393216)/1e3 + 512·104/1e3 = 706.56 + 53.248 = 759.808 -> 759 µs.
    expect(price(tp(), oneDecode())).toBe(266);
    expect(price(tp(1), oneDecode())).toBe(266);
    expect(price(tp(4), oneDecode())).toBe(759);
    // The once-per-step and per-request terms do not scale: β7 (constant) and β6 (per request) alone.
    const fixed = (w: number): number => price(createTrainedPhysicsModel({ model: tiny, hardware: slowHw, tp: 1, alpha: [0, 0, 0], beta: [0, 0, 0, 0, 0, 7, 100], verifyWidth: w }), oneDecode());
    expect(fixed(4)).toBe(fixed(1));
    // The aggregate pricing of steady decodes (stepTimeWithDecodes) agrees with the listed batch.
    const m = tp(4);
    expect(m.stepTimeWithDecodes!(stepBatchOf([], 0), 3, 300)).toBe(price(m, times(3, decodeReq)));
  });

  it('blackbox, by hand: β0 + β2·(decodes·w)', () => {
    const bb = (w: number): LatencyModel => createBlackboxModel({ alpha: [0, 0, 0], beta: [1000, 3, 10], verifyWidth: w });
    const batch = [...times(3, decodeReq), req(40, 5, 0, 40)];
    // 1000 + 3·40 prefill + 10·3·4 = 1240; at w=1: 1000 + 120 + 30 = 1150.
    expect(price(bb(4), batch)).toBe(1240);
    expect(price(bb(1), batch)).toBe(1150);
    expect(bb(4).stepTimeWithDecodes!(stepBatchOf([req(40, 5, 0, 40)], 1), 3, 300)).toBe(1240);
  });

  it('corrected-physics, by hand: each decode computes w positions through the projections, MLP and LM head', () => {
    // corrected-physics.test.ts's small model (d=1024, 2 layers, 8 heads of 128, MLP 4096, vocabulary 1000, BF16)
    // on a 100 TFLOPS, 1 TB/s GPU at efficiency 0.5: 5e7 FLOP/µs, 5e5 B/µs; weights 69,156,864 B -> 138.313728 µs.
    const small = model({ numLayers: 2, hiddenDim: 1024, numHeads: 8, numKVHeads: 8, intermediateDim: 4096, vocabSize: 1000 });
    const link = { kind: 'l', small: { latencyUs: 10, busBandwidthGBs: 50 }, large: { latencyUs: 40, busBandwidthGBs: 400 } };
    const gpu: HardwareConfig = {
      TFlopsPeak: 100, TFlopsFP8: 0, BwPeakTBs: 1, mfuPrefill: 0, mfuDecode: 0, MemoryGiB: 80,
      physics: { efficiency: { gemm: 0.5, attention: 0.5, weightRead: 0.5, kvRead: 0.5 }, interconnect: { gpusPerNode: 8, intraNode: link, interNode: link } },
    };
    const cp = (w: number): LatencyModel => createCorrectedPhysicsModel({ model: small, hardware: gpu, tp: 1, coefficients: { step_us: 0, request_us: 0, frontend_us: 0 }, verifyWidth: w });
    const batch = [req(50, 100, 100, 1), req(50, 300, 300, 1)];
    // w=1: the weight read (138.313728) hides the compute; KV read of 400 context tokens = 6.5536 µs -> 144 µs.
    expect(price(cp(1), batch)).toBe(144);
    // w=64: 2·64 = 128 positions × (2·33,554,432 FLOPs of projections+MLP + 2·1,024,000 of LM head) = 8,852,078,592
    // FLOPs / 5e7 = 177.04157184 µs, now above the weight read and near the roofline's ridge:
    // RIDGE · (177.04157184 + 138.313728) = 0.7 · 315.35529984 = 220.748709888; + 6.5536 (the context is read once)
    // = 227.302 -> 227.
    expect(price(cp(64), batch)).toBe(227);
  });

  it('roofline: w = 1 is the unchanged model; a wider verify costs more, but less than w separate steps', () => {
    const h100: HardwareConfig = { TFlopsPeak: 989.5, TFlopsFP8: 1979.0, BwPeakTBs: 3.35, mfuPrefill: 0.45, mfuDecode: 0.3, MemoryGiB: 80 };
    const llama = model({ vocabSize: 128256 });
    const batch = times(16, () => req(512, 200, 600, 1));
    const rf = (w?: number): LatencyModel => createRooflineModel({ model: llama, hardware: h100, tp: 1, alpha: [0, 0, 0], ...(w === undefined ? {} : { verifyWidth: w }) });
    const one = price(rf(), batch);
    expect(price(rf(1), batch)).toBe(one);
    const four = price(rf(4), batch);
    expect(four).toBeGreaterThan(one);
    expect(four).toBeLessThan(4 * one);
  });
});
