/**
 * Upstream's live expert-parallel step time (#1548, PR #1683) in trained-physics, as a DP-placed replica runs it
 * (--dp-placement replicas): the replica's own dp is 1, its experts are spread whole over the tp·dp GPUs of the
 * logical expert-parallel group. Hand calculations written out below; without the option the step time is the
 * pinned reference's.
 */
import { describe, expect, it } from 'vitest';
import { createTrainedPhysicsModel, type TrainedPhysicsOptions } from './trained-physics.js';
import { model, req } from './test-fixtures.js';
import { stepBatchOf, type HardwareConfig } from './types.js';

// A small MoE: 2 layers (both MoE), d 1024, 8 heads of 128 (8 KV heads, so dKV = 1024), 8 experts of width 2048,
// top-2, bf16. 1 TB/s HBM = 1e6 bytes per µs, so a byte count reads directly as µs × 1e6.
const moe = model({ numLayers: 2, hiddenDim: 1024, numHeads: 8, numKVHeads: 8, intermediateDim: 2048, numLocalExperts: 8, numExpertsPerTok: 2, moeExpertFFNDim: 2048 });
const gpu: HardwareConfig = { TFlopsPeak: 1000, TFlopsFP8: 0, BwPeakTBs: 1, mfuPrefill: 0, mfuDecode: 0, MemoryGiB: 80 };
// β: only the weight term (β2 = 1) and the communication terms (β3 = 100; β10 defaults to β3) count.
const beta = [0, 0, 1, 100, 0, 0, 0];
const base: TrainedPhysicsOptions = { model: moe, hardware: gpu, tp: 2, dp: 1, alpha: [0, 0, 0], beta };
/** One prefill chunk of 100 new tokens. */
const batch = stepBatchOf([req(100, 10, 0, 100)]);
const step = (over: Partial<TrainedPhysicsOptions>): number => createTrainedPhysicsModel({ ...base, ...over }).stepTime(batch);

describe('trained-physics with expert parallelism over a DP-placed group (tp 2, logical dp 2)', () => {
  // Attention weights per GPU: L·d·(2d + 2dKV)·2 bytes / tp = 2·1024·4096·2 / 2 = 8,388,608 bytes.
  // One expert: 3 matrices · 1024 · 2048 · 2 bytes = 12,582,912 bytes.
  // TP all-reduce of 100 tokens, per layer: 100 · 1024 · 2 bytes · 2 (ring phases) · (2 − 1)/2 = 204,800 bytes.

  it('EP off: each rank tensor-shards all 8 experts over its tp 2 GPUs and all-reduces the MoE output', () => {
    // Weights: 8,388,608 + 2 layers · 8/2 experts · 12,582,912 = 8,388,608 + 100,663,296 = 109,051,904 bytes → 109.051904 µs.
    // All-reduces: attention 2 layers + MoE FFN 2 layers = 4 · 204,800 = 819,200 bytes → 0.8192 µs, × β3 100 = 81.92.
    // 109.051904 + 81.92 = 190.971904 → 190 µs.
    expect(step({})).toBe(190);
  });

  it('EP on: 8 experts over the 4 GPUs of tp·dp, 2 whole experts per GPU; dispatch/combine replaces the MoE all-reduce', () => {
    // Weights: 8,388,608 + 2 layers · 8/4 experts · 12,582,912 = 8,388,608 + 50,331,648 = 58,720,256 bytes → 58.720256 µs.
    // Attention all-reduce: 2 · 204,800 = 409,600 bytes → 0.4096 µs, × 100 = 40.96.
    // Dispatch/combine (all-gather family, the default backend), per MoE layer over the group G = 4:
    //   (100 tokens / dp 1) · (4 − 1)/4 · 2 · 1024 · 2 bytes = 307,200 bytes → 0.3072 µs; 2 layers = 0.6144, × β10 100 = 61.44.
    // 58.720256 + 40.96 + 61.44 = 161.120256 → 161 µs: faster than EP off (the weight saving outweighs the dispatch).
    expect(step({ expertParallel: { groupDp: 2 } })).toBe(161);
  });

  it('an all-to-all backend moves each token to its top-2 experts', () => {
    // Per layer: (100 · 2 · 3/4) · 2 = 300 token-copies · 1024 · 2 bytes = 614,400 bytes → 0.6144 µs; 2 layers, × 100 = 122.88.
    // 58.720256 + 40.96 + 122.88 = 222.560256 → 222 µs. EP off is unchanged by the backend (no dispatch at dp 1): 190.
    expect(step({ expertParallel: { groupDp: 2 }, moeCommBackend: 'deepep_low_latency' })).toBe(222);
    expect(step({ moeCommBackend: 'deepep_low_latency' })).toBe(190);
  });

  it('a group spanning nodes moves the cross-node share of the dispatch at the inter-node bandwidth', () => {
    // 2 GPUs per node: the tp 2 group is inside a node, the EP group of 4 spans 2 nodes, so (2 − 1)/2 of the
    // 307,200 dispatch bytes cross at 100 GB/s = 1e5 bytes/µs: 153,600 / 1e6 + 153,600 / 1e5 = 0.1536 + 1.536 =
    // 1.6896 µs per layer, 2 layers · 100 = 337.92; plus 2 collectives per MoE layer · 2 layers · 5 µs = 20 µs.
    // 58.720256 + 40.96 + 337.92 + 20 = 457.600256 → 457 µs. EP off stays in its node: 190.
    const network = { gpusPerNode: 2, bandwidthGBs: 100, latencyUs: 5 };
    expect(step({ expertParallel: { groupDp: 2 }, network })).toBe(457);
    expect(step({ network })).toBe(190);
  });

  it('a group wider than the expert count holds one whole expert per GPU (weights clamped), dispatch over every GPU', () => {
    // tp 2 · dp 8 = 16 GPUs for 8 experts: weights 8,388,608 + 2 · 8/8 · 12,582,912 = 33,554,432 → 33.554432 µs.
    // Dispatch over 16: 100 · 15/16 · 2 · 1024 · 2 bytes = 384,000 bytes per layer → 0.384 µs, 2 layers · 100 = 76.8.
    // 33.554432 + 40.96 + 76.8 = 151.314432 → 151 µs.
    expect(step({ expertParallel: { groupDp: 8 } })).toBe(151);
  });

  it('at dp 1 (group = tp) EP on equals EP off with the all-gather family (the same ring bytes), not with all-to-all', () => {
    // All-gather dispatch over 2: 100 · 1/2 · 2 · 1024 · 2 = 204,800 bytes = the MoE all-reduce it replaces; β10 = β3.
    expect(step({ expertParallel: { groupDp: 1 } })).toBe(190);
    // All-to-all: each token to its top-2 experts, twice the bytes: 2 layers · 0.4096 µs · 100 = 81.92 instead of 40.96.
    // 109.051904 + 40.96 + 81.92 = 231.931904 → 231 µs.
    expect(step({ expertParallel: { groupDp: 1 }, moeCommBackend: 'pplx' })).toBe(231);
  });

  it('at the combined model\'s own dp the group is already tp·dp: EP changes nothing unless the clamp applies', () => {
    expect(step({ dp: 2, expertParallel: { groupDp: 2 } })).toBe(step({ dp: 2 }));
    expect(() => step({ expertParallel: { groupDp: 0 } })).toThrow(/expert-parallel group dp must be an integer >= 1, got 0/);
  });
});
