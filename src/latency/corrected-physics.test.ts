import { describe, expect, it } from 'vitest';
import type { GpuPhysics } from '../config/catalog/gpu-physics.js';
import { GPU_PHYSICS } from '../config/catalog/gpu-physics.js';
import { GPU_CATALOG } from '../config/catalog/hardware.js';
import { createCorrectedPhysicsModel, CORRECTED_PHYSICS_COEFFICIENTS } from './corrected-physics.js';
import { remoteRanksPerToken } from './moe-comm.js';
import { LatencyConfigError } from './errors.js';
import { model, req, times } from './test-fixtures.js';
import { stepBatchOf, type HardwareConfig, type LatencyModel } from './types.js';

/**
 * Expected values are computed by hand from the formulas of docs/fidelity.md for a small dense model:
 * d = 1024, 2 layers, 8 heads of 128, 8 KV heads, SwiGLU MLP of 4096, vocabulary 1000, BF16; a GPU of 100 TFLOPS
 * and 1 TB/s with every efficiency 0.5 (5e7 FLOP/µs, 5e5 B/µs).
 *   projections + MLP per layer = 4·1024² + 3·1024·4096 = 16,777,216 params → 33,554,432 for 2 layers
 *   LM head = 1,024,000 params; weight bytes at tp 1 = (33,554,432 + 1,024,000)·2 = 69,156,864
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
/** The physics alone: no software overhead (the defaults carry vLLM's, checked separately below). */
const PHYSICS_ONLY = { step_us: 0, request_us: 0, frontend_us: 0 };

function grad(m: LatencyModel, batch: ReturnType<typeof req>[]): { t: number; g: Record<string, number> } {
  const out = new Float64Array(CORRECTED_PHYSICS_COEFFICIENTS.length);
  const t = m.linear!.stepGradient(stepBatchOf(batch), out);
  return { t, g: Object.fromEntries(CORRECTED_PHYSICS_COEFFICIENTS.map((n, i) => [n, out[i] as number])) };
}

describe('corrected-physics step time (hand-computed)', () => {
  it('a decode step is a weight read plus a KV read, with the overheads on top', () => {
    const m = createCorrectedPhysicsModel({ model: tiny, hardware: gpu, tp: 1, coefficients: PHYSICS_ONLY });
    // Two decodes at contexts 100 and 300: weights 69,156,864 B / 5e5 = 138.313728 µs (compute is 2.77 µs, hidden);
    // KV 400 tokens × 2 layers × 2 × 128 × 8 heads × 2 B = 3,276,800 B / 5e5 = 6.5536 µs.
    const batch = [req(50, 100, 100, 1), req(50, 300, 300, 1)];
    const { t, g } = grad(m, batch);
    expect(g['weight_read']).toBeCloseTo(138.313728, 9);
    expect(g['compute']).toBe(0);
    expect(g['kv_read']).toBeCloseTo(6.5536, 9);
    expect(g['comm']).toBe(0);
    expect(g['step_us']).toBe(1);
    expect(g['request_us']).toBe(2);
    expect(t).toBeCloseTo(144.867328, 9);
    expect(m.stepTime(stepBatchOf(batch))).toBe(144);
    const withOverheads = createCorrectedPhysicsModel({ model: tiny, hardware: gpu, tp: 1, coefficients: { step_us: 10, request_us: 3, frontend_us: 2500 } });
    expect(withOverheads.stepTime(stepBatchOf(batch))).toBe(160);
    expect(withOverheads.queueingTime(batch[0]!)).toBe(2500);
    expect(withOverheads.outputTokenProcessingTime()).toBe(0);
    // The defaults carry vLLM V1's fitted overheads on top of the physics: 838 µs per step, 8 µs per request.
    const defaults = createCorrectedPhysicsModel({ model: tiny, hardware: gpu, tp: 1 });
    expect(defaults.stepTime(stepBatchOf(batch))).toBe(Math.trunc(144.867328 + 838 + 16));
    expect(defaults.queueingTime(batch[0]!)).toBe(9030);
  });

  it('a 512-token prefill is compute-bound: GEMMs plus causal attention', () => {
    const m = createCorrectedPhysicsModel({ model: tiny, hardware: gpu, tp: 1, coefficients: PHYSICS_ONLY });
    // GEMMs (512·2·33,554,432 + 2·1,024,000) / 5e7 = 687.23572736 µs; attention 2 layers × 4·8·128·512·256.5 /
    // 5e7 = 21.51677952 µs.
    const { t, g } = grad(m, [req(512, 10, 0, 512)]);
    expect(g['compute']).toBeCloseTo(687.23572736 + 21.51677952, 7);
    expect(g['weight_read']).toBe(0);
    expect(t).toBeCloseTo(708.75250688 + 0, 6);
  });

  it('an explicit head_dim sizes attention and the KV cache (not hidden/heads)', () => {
    const plain = createCorrectedPhysicsModel({ model: tiny, hardware: gpu, tp: 1, coefficients: PHYSICS_ONLY });
    const explicit = createCorrectedPhysicsModel({ model: model({ ...tiny, headDim: 64 }), hardware: gpu, tp: 1, coefficients: PHYSICS_ONLY });
    const batch = [req(50, 100, 100, 1), req(50, 300, 300, 1)];
    expect(grad(explicit, batch).g['kv_read']).toBeCloseTo(grad(plain, batch).g['kv_read']! / 2, 9);
    // Half-width heads also halve the Q/O projections: 2·(2·1024·512 + 2·1024·512) fewer weight bytes.
    expect(grad(plain, batch).g['weight_read']! - grad(explicit, batch).g['weight_read']!).toBeCloseTo((2 * 2 * (1024 * 512 + 1024 * 512) * 2) / 5e5, 6);
  });

  it('prices tensor-parallel all-reduce on the link: low-latency protocol for decode, bandwidth protocol for prefill', () => {
    const m = createCorrectedPhysicsModel({ model: tiny, hardware: gpu, tp: 2 });
    // Decode of 2 tokens: 2·1024·2 = 4096 B, ring moves 4096·2·1/2 = 4096 B per GPU: min(10 + 4096/5e4,
    // 40 + 4096/4e5) = 10.08192 µs, two all-reduces per layer. Then the logits all-gather of the 2 sampled
    // positions, an NCCL call on the bandwidth protocol: 2·1000·2 = 4000 B, half per GPU: 40 + 2000/4e5 µs.
    expect(grad(m, [req(50, 100, 100, 1), req(50, 300, 300, 1)]).g['comm']).toBeCloseTo(4 * 10.08192 + 40 + 2000 / 4e5, 9);
    // A 2048-token chunk: 4,194,304 B: min(10 + 83.88608, 40 + 10.48576) = 50.48576 µs; it ends the prompt, so
    // one position is sampled: 40 + 1000/4e5.
    expect(grad(m, [req(2048, 10, 0, 2048)]).g['comm']).toBeCloseTo(4 * 50.48576 + 40 + 1000 / 4e5, 6);
    // Past a node (tp 16 > 8 GPUs per node) the inter-node link prices it: (1 + log2 16)/2 = 2.5 latencies; the
    // gather moves 15/16 of 4000 B at the inter-node bandwidth protocol (60 µs, 20 GB/s).
    const wide = model({ ...tiny, numHeads: 16, numKVHeads: 16, hiddenDim: 2048 });
    const m16 = createCorrectedPhysicsModel({ model: wide, hardware: gpu, tp: 16 });
    const bytes = 2 * 2048 * 2 * 2 * (15 / 16);
    expect(grad(m16, [req(50, 100, 100, 1), req(50, 300, 300, 1)]).g['comm']).toBeCloseTo(4 * (30 * 2.5 + bytes / 5e3) + 60 * 2.5 + 3750 / 2e4, 9);
  });

  it('the catalog prices a PCIe TP pair far above an NVSwitch pair', () => {
    const pair = (name: 'H100' | 'H100-PCIe', batch: ReturnType<typeof req>[]): number => {
      const hw: HardwareConfig = { ...GPU_CATALOG[name], physics: GPU_PHYSICS[name]! };
      const m = createCorrectedPhysicsModel({ model: model(), hardware: hw, tp: 2 });
      return grad(m, batch).g['comm']!;
    };
    const decode = times(32, () => req(512, 10, 600, 1));
    const prefill = [req(2048, 10, 0, 2048)];
    // Latency-bound decode messages: PCIe's longer call latency; bandwidth-bound prefill: 10× less bandwidth.
    expect(pair('H100-PCIe', decode)).toBeGreaterThan(1.5 * pair('H100', decode));
    expect(pair('H100-PCIe', prefill)).toBeGreaterThan(5 * pair('H100', prefill));
  });

  it('MoE: distinct experts hit N·(1 − (1 − k/N)^T); DP ranks add the expert all-to-all', () => {
    const moe = model({ ...tiny, numLocalExperts: 8, numExpertsPerTok: 2, moeExpertFFNDim: 1024, intermediateDim: 1024 });
    const m = createCorrectedPhysicsModel({ model: moe, hardware: gpu, tp: 1 });
    // One decode token: 2 experts of 3·1024·1024·2 B per layer, attention + head as for the dense model.
    const attnHead = (2 * 4 * 1024 * 1024 + 1024 * 1000) * 2;
    const experts = 2 * 2 * 3 * 1024 * 1024 * 2;
    expect(grad(m, [req(50, 100, 100, 1)]).g['weight_read']).toBeCloseTo((attnHead + experts) / 5e5, 6);
    const dp = createCorrectedPhysicsModel({ model: moe, hardware: gpu, tp: 1, dp: 4, expertParallel: true });
    expect(grad(dp, [req(50, 100, 100, 1)]).g['comm']).toBeGreaterThan(0);
    expect(grad(m, [req(50, 100, 100, 1)]).g['comm']).toBe(0);
  });

  it('MoE dispatch at DP > 1: vLLM\'s default all-gathers the hidden states; all-to-all backends send a token once per remote rank', () => {
    const moe = model({ ...tiny, numLocalExperts: 8, numExpertsPerTok: 2, moeExpertFFNDim: 1024, intermediateDim: 1024 });
    const decodes = times(64, () => req(50, 100, 100, 1));
    const comm = (opts: { expertParallel?: boolean; moeCommBackend?: string }): number =>
      grad(createCorrectedPhysicsModel({ model: moe, hardware: gpu, tp: 1, dp: 4, ...opts }), decodes).g['comm']!;
    // allgather_reducescatter, EP on or off: 64 tokens × 1024 × 2 B × dp 4 = 524,288 B, of which each of the 4 GPUs
    // receives 3/4 = 393,216 B; the small protocol over 4 GPUs: 10 µs × (1 + log2 4)/2 + 393,216 / 5e4 = 22.86432 µs
    // (the large one costs 60.98), twice per MoE layer (dispatch, combine), 2 layers.
    expect(comm({ expertParallel: true })).toBeCloseTo(4 * 22.86432, 9);
    expect(comm({ expertParallel: false })).toBeCloseTo(4 * 22.86432, 9);
    expect(comm({ expertParallel: true, moeCommBackend: 'naive' })).toBeCloseTo(4 * 22.86432, 9);
    // deepep_low_latency: 8 experts, 2 per rank, top-2: a rank holds neither of a token's experts with probability
    // (6/8)·(5/7) = 15/28, so 3 · 13/28 = 1.392857 remote ranks per token: 64 × 2,048 B × 39/28 = 182,564.57 B,
    // 15 + 3.6512914 = 18.6512914 µs per call, not the top-k (2) copies per token.
    expect(remoteRanksPerToken(8, 2, 4)).toBeCloseTo(39 / 28, 12);
    expect(comm({ expertParallel: true, moeCommBackend: 'deepep_low_latency' })).toBeCloseTo(4 * (15 + (64 * 2048 * 39) / 28 / 5e4), 9);
    // Qwen3-30B-A3B over 2 ranks: 128 experts, top-8: almost every token needs the other rank once.
    expect(remoteRanksPerToken(128, 8, 2)).toBeCloseTo(1 - [...Array(8).keys()].reduce((p, i) => (p * (64 - i)) / (128 - i), 1), 12);
    expect(remoteRanksPerToken(128, 8, 2)).toBeGreaterThan(0.99);
    expect(() => createCorrectedPhysicsModel({ model: moe, hardware: gpu, tp: 1, dp: 4, moeCommBackend: 'nccl' })).toThrow(/unknown MoE comm backend "nccl"; valid: naive, allgather_reducescatter/);
  });

  it('a mixed step runs its decodes through FlashAttention-2\'s varlen kernel: a 64-row query tile per decode, one roofline with its KV read', () => {
    const fa2 = { ...gpu, physics: { ...physics, mixedDecodeTileRows: 64 } };
    const terms = (hw: HardwareConfig, batch: ReturnType<typeof req>[], tp = 1): { t: number; g: Record<string, number> } => grad(createCorrectedPhysicsModel({ model: tiny, hardware: hw, tp, coefficients: PHYSICS_ONLY }), batch);
    const mixed = [req(512, 10, 0, 512), req(50, 100, 100, 1), req(50, 100, 300, 1)];
    // Decodes at contexts 100 and 300. Tile: 4 · 8 heads · 128 · 64 rows · 400 = 104,857,600 FLOPs per layer, 2 layers,
    // at 0.5 × 100 TFLOPS = 5e7 FLOP/µs: 4.194304 µs. Their KV read: 400 × 8,192 B / 5e5 = 6.5536 µs. The ridge
    // 0.7 · (4.194304 + 6.5536) = 7.5235328 µs exceeds both: compute + 2.9360128, KV − 1.96608, the step + 0.9699328.
    const [a, b] = [terms(fa2, mixed), terms(gpu, mixed)];
    expect(a.g['compute']! - b.g['compute']!).toBeCloseTo(0.7 * 4.194304, 9);
    expect(a.g['kv_read']! - b.g['kv_read']!).toBeCloseTo(-0.3 * 6.5536, 9);
    expect(a.t - b.t).toBeCloseTo(0.7 * (4.194304 + 6.5536) - 6.5536, 9);
    // Decodes alone (no prefill in the step) run the decode kernel: no tile.
    const decodes = mixed.slice(1);
    expect(terms(fa2, decodes)).toEqual(terms(gpu, decodes));
    // At TP 2 each GPU holds half the heads: tile 2.097152 µs, KV 3.2768 µs, compute + 0.7 × 2.097152.
    expect(terms(fa2, mixed, 2).g['compute']! - terms(gpu, mixed, 2).g['compute']!).toBeCloseTo(0.7 * 2.097152, 9);
    // Far from the ridge the larger term alone: a 1,000-row tile is compute-bound (65.536 µs ≫ 6.5536).
    const wide = { ...gpu, physics: { ...physics, mixedDecodeTileRows: 1000 } };
    expect(terms(wide, mixed).g['compute']! - b.g['compute']!).toBeCloseTo(4.194304 * 1000 / 64, 6);
    expect(terms(wide, mixed).g['kv_read']! - b.g['kv_read']!).toBeCloseTo(-6.5536, 9);
    // An engine that calls the decode kernel apart (vLLM V0) pays no tile.
    expect(grad(createCorrectedPhysicsModel({ model: tiny, hardware: fa2, tp: 1, coefficients: PHYSICS_ONLY, unifiedAttention: false }), mixed)).toEqual(b);
  });

  it('is homogeneous in its coefficients: the step time is Σ c·gradient', () => {
    const c = { compute: 1.3, weight_read: 0.8, kv_read: 1.7, comm: 2, step_us: 120, request_us: 7, frontend_us: 0 };
    const m = createCorrectedPhysicsModel({ model: tiny, hardware: gpu, tp: 2, coefficients: c });
    for (const batch of [[req(512, 10, 0, 512), req(50, 100, 100, 1)], times(5, () => req(50, 100, 300, 1))]) {
      const { t, g } = grad(m, batch);
      expect(t).toBeCloseTo(CORRECTED_PHYSICS_COEFFICIENTS.reduce((s, n) => s + c[n] * g[n]!, 0), 9);
    }
    expect(m.stepTime(stepBatchOf([]))).toBe(1);
  });

  it('rejects bad coefficients and physics with the field named', () => {
    expect(() => createCorrectedPhysicsModel({ model: tiny, hardware: gpu, tp: 1, coefficients: { compute: -1 } })).toThrow(/compute must be a finite number >= 0/);
    expect(() => createCorrectedPhysicsModel({ model: tiny, hardware: gpu, tp: 1, coefficients: { weight_read: 0 } })).toThrow(LatencyConfigError);
    expect(() => createCorrectedPhysicsModel({ model: tiny, hardware: gpu, tp: 1, coefficients: { nope: 1 } as never })).toThrow(/unknown coefficient "nope"/);
    const badEff = { ...gpu, physics: { ...physics, efficiency: { ...physics.efficiency, gemm: 1.5 } } };
    expect(() => createCorrectedPhysicsModel({ model: tiny, hardware: badEff, tp: 1 })).toThrow(/efficiency.gemm must be in \(0, 1\]/);
    expect(() => createCorrectedPhysicsModel({ model: tiny, hardware: gpu, tp: 3 })).toThrow(/divisible by tp/);
  });

  it('every catalog GPU has physics with fractions in (0, 1] and positive bandwidths', () => {
    for (const name of Object.keys(GPU_CATALOG)) {
      const p = GPU_PHYSICS[name];
      expect(p, name).toBeDefined();
      for (const v of Object.values(p!.efficiency)) expect(v > 0 && v <= 1, name).toBe(true);
      for (const l of [p!.interconnect.intraNode, p!.interconnect.interNode]) {
        expect(l.small.busBandwidthGBs).toBeGreaterThan(0);
        expect(l.large.busBandwidthGBs).toBeGreaterThan(l.small.busBandwidthGBs);
      }
    }
  });
});
