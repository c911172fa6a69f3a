/**
 * EP-aware KV capacity (upstream #1656/#1660): under expert parallelism each DP rank's tp GPUs hold tp/ep of the
 * routed experts, so the weight charged against one rank's memory falls by R·(1 − tp/ep) and KV blocks rise.
 * Checked against the memory formula written out for Mixtral-8x7B on H100.
 */
import { describe, expect, it } from 'vitest';
import { MODEL_CATALOG } from '../config/catalog/models.js';
import { extractKVCapacityParams, parseHFConfig } from './hf-config.js';
import { calculateKVBlocks, modelWeightBytes, routedExpertBytes } from './kv-capacity.js';
import type { HardwareConfig } from './types.js';

const GIB = 2 ** 30;
const h100: HardwareConfig = { TFlopsPeak: 989.5, TFlopsFP8: 1979.0, BwPeakTBs: 3.35, mfuPrefill: 0.45, mfuDecode: 0.3, MemoryGiB: 80 };
const raw = MODEL_CATALOG['mixtral-8x7b-v0.1'].config;
const mc = parseHFConfig(raw, 'mixtral');
const params = extractKVCapacityParams(raw, 'mixtral');
const blocks = (tp: number, dp: number, ep?: number): number =>
  calculateKVBlocks(mc, h100, params, { tp, dp, blockSize: 16, gpuMemoryUtilization: 0.9, ...(ep === undefined ? {} : { expertParallelSize: ep }) });

describe('EP-aware KV capacity (Mixtral-8x7B: 32 layers, d 4096, 8 experts of width 14336, bf16)', () => {
  // Weights: vocab·d (32000·4096 = 131,072,000) + L·(attention d·(d + 2·1024) + d·d = 41,943,040, + 2d norms)
  // = 1,342,439,424 + L·(3·d·14336·8 experts + 8·d router = 1,409,318,912) = 45,098,205,184 + untied LM head
  // 131,072,000 + final norm 4096 = 46,702,792,704 parameters = 93,405,585,408 bytes.
  const W = 93_405_585_408;
  // Routed experts: 32 layers · 3 · 4096 · 14336 · 8 experts · 2 bytes = 90,194,313,216 bytes (97% of W).
  const R = 90_194_313_216;
  // Per-GPU KV bytes per token at tp 2: 32 layers · 2 (K, V) · 128 head dim · 8 KV heads · 2 bytes / 2 = 65,536;
  // a 16-token block = 1,048,576 bytes. One rank's memory: 80 GiB · 0.9 · 2 GPUs = 144 GiB, less 8 GiB MoE
  // activations and 0.6 GiB non-torch per GPU.
  const perBlock = 1_048_576;
  const rankBlocks = (weightBytes: number): number => Math.trunc(Math.trunc((80 * 0.9 * 2 - (weightBytes / GIB + 8.0 + 0.6 * 2 + 0)) * GIB) / perBlock);

  it('the weight and routed-expert byte counts are the ones written out', () => {
    expect(modelWeightBytes(mc, params)).toBe(W);
    expect(routedExpertBytes(mc, params)).toBe(R);
  });

  it('EP off (the pinned reference): every rank is charged all the experts; × dp ranks', () => {
    expect(blocks(2, 4)).toBe(rankBlocks(W) * 4);
    expect(rankBlocks(W)).toBe(48_956); // (144 − 86.99 − 9.2) GiB = 47.81 GiB of 1 MiB blocks
  });

  it('EP over tp·dp = 8 GPUs: a rank holds 2/8 of the experts, R·(1 − 2/8) = 67,645,734,912 bytes freed', () => {
    const onWeights = W - R * (1 - 2 / 8);
    expect(onWeights).toBe(25_759_850_496);
    expect(blocks(2, 4, 8)).toBe(rankBlocks(onWeights) * 4);
    expect(rankBlocks(onWeights)).toBe(113_468); // (144 − 23.99 − 9.2) GiB = 110.81 GiB of 1 MiB blocks
    // Not the "divide the total by ep" misreading (R·(1 − 1/ep) freed), which under-counts by another factor of tp.
    expect(blocks(2, 4, 8)).not.toBe(rankBlocks(W - R * (1 - 1 / 8)) * 4);
  });

  it('a group at or below tp changes nothing; a group wider than the expert count is clamped to it', () => {
    expect(blocks(2, 4, 0)).toBe(blocks(2, 4));
    expect(blocks(2, 4, 1)).toBe(blocks(2, 4));
    expect(blocks(2, 4, 2)).toBe(blocks(2, 4));
    expect(blocks(2, 8, 16)).toBe(blocks(2, 8, 8));
    expect(() => blocks(2, 4, -1)).toThrow(/expert-parallel group size must be an integer >= 0/);
  });
});
