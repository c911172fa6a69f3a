/**
 * Per-class weight streaming (issue 28): an A100 decode step reads its weights at Ampere's published
 * whole-step fraction (gpt-fast: 1,397.31 of 2,039 GB/s = 0.685), not H100's 0.85. Hand calculations on the
 * Llama-3.1-8B-shaped fixture (no vocabulary, so no LM head):
 *   per layer: attention 4096·4096·2 + 2·4096·1024 = 41,943,040 params, MLP 3·4096·14,336 = 176,160,768;
 *   32 layers → 6,979,321,856 params → 13,958,643,712 bytes in bf16.
 */
import { describe, expect, it } from 'vitest';
import { GPU_CATALOG } from '../config/catalog/hardware.js';
import { FA2_DECODE_TILE_ROWS, GPU_CLASSES, GPU_PHYSICS } from '../config/catalog/gpu-physics.js';
import { RIDGE } from './corrected-physics.js';
import { correctedTerm, model, uniformBatch } from './test-fixtures.js';
import type { HardwareConfig } from './types.js';

const BYTES = 13_958_643_712;

/** The weight-read term (µs) of one decode step of one sequence at context 100. */
function weightUs(hw: HardwareConfig): number {
  return correctedTerm({ model: model(), hardware: hw, tp: 1 }, uniformBatch(1, 100, 1, 50), 'weight_read');
}

const gpu = (name: 'H100' | 'A100-80' | 'A100-40' | 'RTX-4090' | 'RTX-PRO-6000'): HardwareConfig => ({ ...GPU_CATALOG[name], physics: GPU_PHYSICS[name]! });

describe('weight streaming by GPU class', () => {
  it('A100 80GB: 13.96 GB at 0.685 × 2,039 GB/s = 9,993.9 µs', () => {
    // 2.039 TB/s = 2,039,000 bytes/µs; × 0.685 = 1,396,715 bytes/µs.
    expect(weightUs(gpu('A100-80'))).toBeCloseTo(BYTES / 1_396_715, 6);
    expect(weightUs(gpu('A100-80'))).toBeCloseTo(9993.91, 1);
  });

  it('the H100 figure carried to A100 (the old pricing) is 19.4 % cheaper and is gone', () => {
    const old = BYTES / (2_039_000 * 0.85);
    expect(old).toBeCloseTo(8053.9, 1);
    expect(weightUs(gpu('A100-80'))).toBeGreaterThan(old * 1.2);
  });

  it('every Ampere entry and the user class "ampere" share the figure; H100 keeps 0.85 (its 16 public runs unchanged)', () => {
    for (const name of ['A100-40', 'A100-80', 'A100-SXM']) expect(GPU_PHYSICS[name]!.efficiency.weightRead).toBe(0.685);
    expect(GPU_CLASSES.ampere.efficiency.weightRead).toBe(0.685);
    expect(GPU_PHYSICS.H100!.efficiency).toEqual({ gemm: 0.7, attention: 0.55, weightRead: 0.85, kvRead: 0.8 });
    // H100: 3.35 TB/s × 0.85 = 2,847,500 bytes/µs.
    expect(weightUs(gpu('H100'))).toBeCloseTo(BYTES / 2_847_500, 6);
    // A100 40GB (1,555 GB/s) scales with its datasheet bandwidth at the same fraction.
    expect(weightUs(gpu('A100-40'))).toBeCloseTo(BYTES / (1_555_000 * 0.685), 6);
  });
});

/** The compute term (µs) of one prefill step of one fresh 2,048-token prompt (compute-bound on every GPU here). */
function computeUs(hw: HardwareConfig): number {
  return correctedTerm({ model: model(), hardware: hw, tp: 1 }, uniformBatch(1, 0, 2048, 2048), 'compute');
}

describe('GEMM efficiency by GPU class (vidur kernel profiles: A100 0.72, H100 0.715)', () => {
  // Projections: 2 · 2,048 tokens · 6,979,321,856 params = 28,587,302,322,176 FLOPs. Attention (32 heads of 128 over
  // the causal chunk): 4 · 32 · 128 · 2,048 · 2,049/2 · 32 layers = 1,100,048,498,688 FLOPs at the attention rate.
  const LIN = 2 * 2048 * 6_979_321_856;
  const ATTN = 4 * 32 * 128 * 2048 * (2049 / 2) * 32;

  it('A100 80GB: the projections at 0.72 × 312 TFLOPS, attention at 0.55 × 312', () => {
    // 312 TFLOPS = 312,000,000 FLOPs/µs; × 0.72 = 224,640,000; × 0.55 = 171,600,000.
    expect(computeUs(gpu('A100-80'))).toBeCloseTo(LIN / 224_640_000 + ATTN / 171_600_000, 6);
    expect(computeUs(gpu('A100-80'))).toBeCloseTo(133_668.8, 0);
  });

  it('the 0.8 of square cuBLAS benchmarks (the old pricing) is gone: an A100 prefill chunk costs 11 % more', () => {
    const old = LIN / (312_000_000 * 0.8) + ATTN / 171_600_000;
    expect(computeUs(gpu('A100-80')) / old).toBeGreaterThan(1.1);
    for (const name of ['A100-40', 'A100-80', 'A100-SXM']) expect(GPU_PHYSICS[name]!.efficiency.gemm).toBe(0.72);
    expect(GPU_CLASSES.ampere.efficiency.gemm).toBe(0.72);
  });

  it('H100 keeps 0.7 (vidur: 0.715 by the same protocol)', () => {
    // 989.5 TFLOPS: × 0.7 = 692,650,000 FLOPs/µs; × 0.55 = 544,225,000.
    expect(computeUs(gpu('H100'))).toBeCloseTo(LIN / 692_650_000 + ATTN / 544_225_000, 6);
  });
});

describe('workstation GPUs from their kernel profiles (LLMServingSim vLLM 0.19 bundles: docs/fidelity.md)', () => {
  const LIN = 2 * 2048 * 6_979_321_856;
  const ATTN = 4 * 32 * 128 * 2048 * (2049 / 2) * 32;

  it('RTX 4090: weights stream at 0.91 × 1,008 GB/s, GEMMs at 0.99 and prefill attention at 0.63 of 165.2 TFLOPS', () => {
    // 1.008 TB/s × 0.91 = 917,280 bytes/µs: 13.96 GB in 15,217.4 µs (the Ada class's 0.8 gave 17,309.8 µs).
    expect(weightUs(gpu('RTX-4090'))).toBeCloseTo(BYTES / 917_280, 6);
    expect(weightUs(gpu('RTX-4090'))).toBeCloseTo(15_217.4, 1);
    // 165.2 TFLOPS × 0.99 = 163,548,000 FLOPs/µs; × 0.63 = 104,076,000.
    expect(computeUs(gpu('RTX-4090'))).toBeCloseTo(LIN / 163_548_000 + ATTN / 104_076_000, 6);
  });

  it('RTX PRO 6000 Blackwell: GEMMs at 0.73 and attention at 0.41 of 503.8 TFLOPS; the class blackwell-gddr shares them', () => {
    // 503.8 TFLOPS × 0.73 = 367,774,000 FLOPs/µs; × 0.41 = 206,558,000.
    expect(computeUs(gpu('RTX-PRO-6000'))).toBeCloseTo(LIN / 367_774_000 + ATTN / 206_558_000, 6);
    expect(computeUs(gpu('RTX-PRO-6000'))).toBeCloseTo(83_056.2, 0);
    expect(GPU_CLASSES['blackwell-gddr'].efficiency).toEqual(GPU_PHYSICS['RTX-PRO-6000']!.efficiency);
    // The Ada class (L40S, L4) keeps its figures: no kernel profile of those cards was found.
    expect(GPU_PHYSICS.L40S!.efficiency).toEqual({ gemm: 0.7, attention: 0.5, weightRead: 0.8, kvRead: 0.75 });
  });
});

describe('the roofline ridge: GEMMs cost max(compute, weights, RIDGE · (compute + weights))', () => {
  // The 8B fixture on H100: weights 13,958,643,712 B / 2,847,500 B/µs; each decode token's projections
  // 2 · 6,979,321,856 FLOPs / 692,650,000 FLOPs/µs.
  const TM = BYTES / 2_847_500;
  const TC1 = (2 * 6_979_321_856) / 692_650_000;
  const terms = (n: number): [number, number] => {
    const b = uniformBatch(n, 100, 1, 50);
    const o = { model: model(), hardware: gpu('H100'), tp: 1 };
    return [correctedTerm(o, b, 'compute'), correctedTerm(o, b, 'weight_read')];
  };

  it('RIDGE is 0.7 (kernel profiles give 0.84; the H100 runs admit at most 0.7: docs/fidelity.md)', () => {
    expect(RIDGE).toBe(0.7);
  });

  it('64 decodes: far below the ridge, the weights alone (4,902.1 µs)', () => {
    expect(TC1 * 64).toBeLessThan(TM * 0.3 / 0.7);
    const [c, w] = terms(64);
    expect(c).toBe(0);
    expect(w).toBeCloseTo(TM, 6);
    expect(w).toBeCloseTo(4902.07, 2);
  });

  it('256 decodes: compute 5,159.0 µs and weights 4,902.1 µs overlap only partly: 0.7 of their sum, 7,042.8 µs', () => {
    const [c, w] = terms(256);
    expect(c).toBeCloseTo(0.7 * TC1 * 256, 6);
    expect(w).toBeCloseTo(0.7 * TM, 6);
    expect(c + w).toBeCloseTo(7042.78, 2);
    // The max alone (the old pricing) was 27 % cheaper.
    expect((c + w) / Math.max(TC1 * 256, TM)).toBeCloseTo(1.365, 3);
  });

  it('1,024 decodes: far above the ridge, the compute alone (20,636.2 µs)', () => {
    const [c, w] = terms(1024);
    expect(c).toBeCloseTo(TC1 * 1024, 6);
    expect(w).toBe(0);
  });
});

describe('workstation cards talk without P2P by default (gpu-physics.ts)', () => {
  it('RTX 4090 and RTX PRO 6000: the no-P2P PCIe 4 / 5 links; the datacenter PCIe entries keep P2P', () => {
    expect(GPU_PHYSICS['RTX-4090']!.interconnect.intraNode).toEqual({ kind: 'pcie4-no-p2p', small: { latencyUs: 40, busBandwidthGBs: 5 }, large: { latencyUs: 50, busBandwidthGBs: 9 } });
    expect(GPU_PHYSICS['RTX-PRO-6000']!.interconnect.intraNode).toEqual({ kind: 'pcie5-no-p2p', small: { latencyUs: 40, busBandwidthGBs: 10 }, large: { latencyUs: 40, busBandwidthGBs: 17.5 } });
    expect(GPU_PHYSICS['H100-PCIe']!.interconnect.intraNode.kind).toBe('pcie5');
  });

  it('Qwen3-32B at TP 2 on RTX PRO 6000, 128 decodes: 128 all-reduces of 1.31 MB at 114.9 µs plus the logits all-gather, 15,858.3 µs', () => {
    const q32 = model({ numLayers: 64, hiddenDim: 5120, numHeads: 64, numKVHeads: 8, headDim: 128, intermediateDim: 25600, vocabSize: 151_936 });
    const comm = correctedTerm({ model: q32, hardware: gpu('RTX-PRO-6000'), tp: 2 }, uniformBatch(128, 1000, 1, 500), 'comm');
    // All-reduce: 128 × 5,120 × 2 B = 1,310,720 B, a 2-GPU ring moves 2·(1/2) of it: large protocol 40 + 1,310,720 / 17,500
    // = 114.898 µs (small: 40 + 131.07 = 171.07), 2 per layer × 64 layers. Logits: 128 × 151,936 × 2 B, each GPU
    // receives half, 19,447,808 B as one NCCL call: 40 + 1,111.303 µs.
    const ar = 40 + 1_310_720 / 17_500;
    const logits = 40 + (128 * 151_936 * 2) / 2 / 17_500;
    expect(comm).toBeCloseTo(128 * ar + logits, 6);
    expect(comm).toBeCloseTo(15_858.28, 2);
  });
});

describe('the mixed-step decode tile by GPU (FA2_DECODE_TILE_ROWS)', () => {
  it('FlashAttention-2 GPUs (Ampere, Ada, workstation Blackwell) carry 64 rows; Hopper and datacenter Blackwell none', () => {
    for (const name of ['A100-40', 'A100-80', 'A100-SXM', 'L40S', 'L4', 'RTX-4090', 'RTX-PRO-6000']) expect(GPU_PHYSICS[name]!.mixedDecodeTileRows).toBe(FA2_DECODE_TILE_ROWS);
    for (const name of ['H100', 'H100-PCIe', 'H200', 'B200', 'B300']) expect(GPU_PHYSICS[name]!.mixedDecodeTileRows).toBeUndefined();
    expect(FA2_DECODE_TILE_ROWS).toBe(64);
  });

  it('Llama-3.1-8B on the RTX PRO 6000, 128 decodes at 1,024 plus a 512-token chunk: tiles of 5.08 ns and a KV read of 2.86 ns per context token and layer', () => {
    const hw = gpu('RTX-PRO-6000');
    const batch = (): ReturnType<typeof uniformBatch> => {
      const b = uniformBatch(129, 1024, 1, 500);
      b.progress[128] = 0;
      b.newTokens[128] = 512;
      b.inputLen[128] = 600;
      return b;
    };
    const opts = (tile: number) => ({ model: model(), hardware: { ...hw, physics: { ...hw.physics!, mixedDecodeTileRows: tile } }, tp: 1 });
    // Tile: 4 · 32 heads · 128 · 64 rows = 1,048,576 FLOPs per context token and layer at 0.41 × 503.8 TFLOPS
    // (206.558 FLOP/ps): 5.0764 ns. KV: 2 · 8 heads · 128 · 2 B = 4,096 B at 0.8 × 1,792 GB/s: 2.8571 ns. Over
    // 128 × 1,024 tokens and 32 layers: 21,292.1 and 11,983.7 µs; the ridge 0.7 × 33,275.8 = 23,293.05 µs prices both.
    const tile = (1_048_576 / 206_558_000) * 128 * 1024 * 32;
    const kv = (4096 / 1_433_600) * 128 * 1024 * 32;
    expect(tile).toBeCloseTo(21_292.1, 1);
    expect(kv).toBeCloseTo(11_983.7, 1);
    const withTile = correctedTerm(opts(64), batch(), 'compute') + correctedTerm(opts(64), batch(), 'kv_read');
    const without = correctedTerm(opts(0), batch(), 'compute') + correctedTerm(opts(0), batch(), 'kv_read');
    expect(withTile - without).toBeCloseTo(0.7 * (tile + kv) - kv, 6);
    expect(0.7 * (tile + kv)).toBeCloseTo(23_293.05, 1);
  });
});
