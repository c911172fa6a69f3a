/**
 * Tensor-parallel all-reduce priced by hand (issue 28, item 1): the ring moves 2(n − 1)/n of the message per
 * GPU; a call costs the cheaper of the link's two protocols, latency·(1 + log2 n)/2 + bus bytes / bus bandwidth
 * (GB/s = 1e3 bytes/µs); a layer has two all-reduces (Falcon's parallel attention one). Link figures: NVLink
 * from the datasheet bandwidth and class, PCIe by generation, with and without P2P.
 */
import { describe, expect, it } from 'vitest';
import { GPU_CATALOG } from '../config/catalog/hardware.js';
import { GPU_PHYSICS, NCCL_IN_STEP_CALL_US, nvlinkLink, pcieLink } from '../config/catalog/gpu-physics.js';
import { correctedTerm, model, uniformBatch } from './test-fixtures.js';
import type { HardwareConfig } from './types.js';

/** The comm term (µs) of one step of `n` requests with `tokens` new tokens each, decoding (or prefilling from 0). */
function comm(hw: HardwareConfig, tp: number, n: number, tokens: number, over = {}): number {
  const prefill = tokens > 1;
  return correctedTerm({ model: model(over), hardware: hw, tp }, uniformBatch(n, prefill ? 0 : 100, tokens, prefill ? tokens : 50), 'comm');
}

const H100: HardwareConfig = { ...GPU_CATALOG.H100, physics: GPU_PHYSICS.H100! };
const L40S: HardwareConfig = { ...GPU_CATALOG.L40S, physics: GPU_PHYSICS.L40S! };

describe('TP all-reduce, hand calculations (hidden 4096, 32 layers, bf16)', () => {
  it('NVLink 4 NVSwitch, TP 2, 8 decodes: 64 KiB per call, low-latency protocol', () => {
    // bytes 8·4096·2 = 65,536; ring 2·1/2 → 65,536 per GPU; hops (1 + 1)/2 = 1.
    // small 8.5 + 65,536/57,000 = 9.6498 µs; large 13.5 + 65,536/360,000 = 13.682 µs → small; × 2 × 32 layers.
    expect(comm(H100, 2, 8, 1)).toBeCloseTo(64 * (8.5 + 65536 / 57000), 9);
  });

  it('PCIe 4, TP 4, a 2048-token prefill: 16 MiB per call, bandwidth protocol', () => {
    // bytes 2048·4096·2 = 16,777,216; ring 2·3/4 → 25,165,824 per GPU; hops (1 + 2)/2 = 1.5. TP 4 on PCIe makes
    // NCCL calls (at least 40 µs per hop factor): small 40·1.5 + 25,165,824/10,000 = 2,576.6 µs;
    // large 40·1.5 + 25,165,824/18,000 = 1,458.1 µs → large.
    expect(comm(L40S, 4, 1, 2048)).toBeCloseTo(64 * (40 * 1.5 + 25165824 / 18000), 6);
  });

  it('the same prefill over NVSwitch costs 14× less; TP 1 has no collective; TP 8 moves 7/4 of the message', () => {
    const nv = comm(H100, 4, 1, 2048);
    expect(nv).toBeCloseTo(64 * (13.5 * 1.5 + 25165824 / 360000), 6);
    expect(comm(L40S, 4, 1, 2048) / nv).toBeGreaterThan(14);
    expect(comm(H100, 1, 1, 2048)).toBe(0);
    // TP 8: ring 2·7/8 = 1.75 × 16 MiB = 29,360,128 bytes per GPU; hops (1 + 3)/2 = 2.
    expect(comm(H100, 8, 1, 2048)).toBeCloseTo(64 * (13.5 * 2 + 29360128 / 360000), 6);
  });

  it('one all-reduce per layer where the model sums attention and MLP first (Falcon)', () => {
    expect(comm(H100, 2, 8, 1, { allReducesPerLayer: 1 })).toBeCloseTo(32 * (8.5 + 65536 / 57000), 9);
  });
});

describe('links derived from datasheet facts', () => {
  it('PCIe by generation (bandwidth doubles per generation), without P2P twice the latency (at least an NCCL call) and half the bandwidth', () => {
    const bw = (g: number): number => pcieLink(g, true)!.large.busBandwidthGBs;
    expect([3, 4, 5, 6].map(bw)).toEqual([9, 18, 35, 70]);
    expect([3, 4, 5, 6].map((g) => pcieLink(g, true)!.small.latencyUs)).toEqual([18, 15, 12, 10]);
    // 2 × 12 = 24 µs is below an NCCL call's 40 µs in a decode step: without P2P every call is NCCL's.
    expect(pcieLink(5, false)).toEqual({ kind: 'pcie5-no-p2p', small: { latencyUs: 40, busBandwidthGBs: 10 }, large: { latencyUs: 40, busBandwidthGBs: 17.5 } });
    // PCIe 3: 2 × 30 = 60 µs for the bandwidth protocol stays above the floor.
    expect(pcieLink(3, false)!.large.latencyUs).toBe(60);
    expect(pcieLink(2, true)).toBeUndefined();
  });

  it('an NCCL call in a decode step: gpt-fast (A100, Llama-2-7B) 104.9 tokens/s at TP 1, 136.27 at TP 2, 64 all-reduces', () => {
    // (1/136.27 − 1/(2·104.9)) s / 64 = (7,338.4 − 4,766.4) µs / 64 = 40.2 µs.
    expect(((1 / 136.27 - 1 / (2 * 104.9)) * 1e6) / 64).toBeCloseTo(40.2, 1);
    expect(NCCL_IN_STEP_CALL_US).toBe(40);
  });

  it('PCIe with P2P: TP 2 uses the custom all-reduce, TP 4 falls back to NCCL calls (vLLM: no custom all-reduce on more than two PCIe-only GPUs)', () => {
    // TP 2: 64 × (15 + 8,192/10,000) = 1,012.4 µs, unchanged.
    expect(comm(L40S, 2, 1, 1)).toBeCloseTo(64 * (15 + 8192 / 10000), 9);
    // TP 4: ring 2·3/4 → 12,288 bytes per GPU; hops 1.5; both protocols are NCCL's, each at least 40 µs per hop
    // factor: small 40·1.5 + 12,288/10,000 = 61.23 µs, large 40·1.5 + 12,288/18,000 = 60.68 µs → large;
    // × 64 = 3,883.7 µs (vLLM's custom all-reduce figure, 15·1.5 + 1.23 µs, gave 1,518.7).
    expect(comm(L40S, 4, 1, 1)).toBeCloseTo(64 * (40 * 1.5 + 12288 / 18000), 9);
    expect(comm(L40S, 4, 1, 1)).toBeCloseTo(3883.7, 1);
    // gpt-fast's TP 4 rate (168.78 tokens/s) gives (1/168.78 − 1/(4·104.9)) s / 64 = 55.3 µs per call: 40·1.5 = 60.
    expect(((1 / 168.78 - 1 / (4 * 104.9)) * 1e6) / 64).toBeCloseTo(55.3, 1);
    // NVLink has no such limit: H100 TP 4 keeps vLLM's custom all-reduce, 64 × (8.5·1.5 + 12,288/57,000).
    expect(comm(H100, 4, 1, 1)).toBeCloseTo(64 * (8.5 * 1.5 + 12288 / 57000), 9);
  });

  it('TP 2 over PCIe 4 without P2P, one decode (hidden 4096, 32 layers): 64 NCCL calls of 8 KiB', () => {
    const hw: HardwareConfig = { ...L40S, physics: { ...L40S.physics!, interconnect: { ...L40S.physics!.interconnect, intraNode: pcieLink(4, false)! } } };
    // bytes 1·4096·2 = 8,192; ring 2·1/2 → 8,192 per GPU; hops 1. small 40 + 8,192/5,000 = 41.64 µs;
    // large 50 + 8,192/9,000 = 50.91 µs → small; × 64 = 2,664.9 µs (the old 2 × 15 µs gave 2,024.9).
    expect(comm(hw, 2, 1, 1)).toBeCloseTo(64 * (40 + 8192 / 5000), 9);
    expect(comm(hw, 2, 1, 1)).toBeCloseTo(2664.9, 1);
  });

  it('NVLink from its bidirectional datasheet figure: 900 GB/s gives the H100 catalog link, 600 (A100) two thirds of it at Ampere latency', () => {
    expect(nvlinkLink(900, 'hopper').small).toEqual(GPU_PHYSICS.H100!.interconnect.intraNode.small);
    expect(nvlinkLink(900, 'hopper').large).toEqual(GPU_PHYSICS.H100!.interconnect.intraNode.large);
    const a = nvlinkLink(600, 'ampere');
    expect(a.small.latencyUs).toBe(10);
    expect(a.small.busBandwidthGBs).toBeCloseTo(38, 9);
    expect(a.large).toEqual({ latencyUs: 15, busBandwidthGBs: 240 });
  });
});

describe('the logits all-gather at TP > 1 (vLLM V1 LogitsProcessor: tensor_model_parallel_all_gather)', () => {
  it('H100 TP 2, 8 decodes of a 128,256-token vocabulary: one NCCL call of 2 MB on top of the 64 all-reduces', () => {
    // logits 8 · 128,256 · 2 bytes = 2,052,096; each GPU receives (2 − 1)/2 → 1,026,048 bytes; an NCCL call
    // (the bandwidth protocol even where the custom all-reduce is cheaper): 13.5 + 1,026,048/360,000 = 16.35 µs.
    const allReduces = 64 * (8.5 + 65536 / 57000);
    expect(comm(H100, 2, 8, 1, { vocabSize: 128256 })).toBeCloseTo(allReduces + 13.5 + 1026048 / 360000, 9);
    expect(comm(H100, 2, 8, 1, { vocabSize: 128256 }) - allReduces).toBeCloseTo(16.35, 2);
  });

  it('TP 4: (4 − 1)/4 of the logits per GPU, hop factor 1.5; TP 1 gathers nothing', () => {
    // 8 · 128,256 · 2 · 3/4 = 1,539,072 bytes; 13.5 · 1.5 + 1,539,072/360,000 = 24.5252 µs.
    expect(comm(H100, 4, 8, 1, { vocabSize: 128256 }) - comm(H100, 4, 8, 1)).toBeCloseTo(13.5 * 1.5 + 1539072 / 360000, 9);
    expect(comm(H100, 1, 8, 1, { vocabSize: 128256 })).toBe(0);
  });

  it('a prefill chunk that does not finish its prompt samples nothing, so gathers nothing', () => {
    const commOf = (vocab: number): number => correctedTerm({ model: model({ vocabSize: vocab }), hardware: H100, tp: 2 }, uniformBatch(1, 0, 512, 2048), 'comm');
    expect(commOf(128256)).toBe(commOf(0));
  });

  it('A100 TP 2 over PCIe 4 without P2P, 100 decodes of Qwen2 (vocabulary 152,064): 1.74 ms per step', () => {
    const hw: HardwareConfig = { ...L40S, physics: { ...L40S.physics!, interconnect: { ...L40S.physics!.interconnect, intraNode: pcieLink(4, false)! } } };
    // 100 · 152,064 · 2 = 30,412,800 bytes; half per GPU = 15,206,400; large protocol 50 + 15,206,400/9,000 µs.
    const gather = comm(hw, 2, 100, 1, { vocabSize: 152064 }) - comm(hw, 2, 100, 1);
    expect(gather).toBeCloseTo(50 + 15206400 / 9000, 9);
    expect(gather).toBeCloseTo(1739.6, 1);
  });
});
