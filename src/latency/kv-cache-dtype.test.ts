import { describe, expect, it } from 'vitest';
import { MODEL_CATALOG } from '../config/catalog/models.js';
import { extractKVCapacityParams, parseHFConfig } from './hf-config.js';
import { KV_CACHE_DTYPES, calculateKVBlocks, kvBytesPerToken, kvCacheDtypeBytes, modelWeightBytes } from './kv-capacity.js';
import { createRooflineModel } from './roofline.js';
import { createTrainedPhysicsModel } from './trained-physics.js';
import { model, req, times } from './test-fixtures.js';
import { stepBatchOf, type HardwareConfig, type ModelConfig } from './types.js';

const h100: HardwareConfig = { TFlopsPeak: 989.5, TFlopsFP8: 1979.0, BwPeakTBs: 3.35, mfuPrefill: 0.45, mfuDecode: 0.3, MemoryGiB: 80 };
const GIB = 2 ** 30;
const cfg = MODEL_CATALOG['llama-3.1-8b-instruct'].config;
const params = extractKVCapacityParams(cfg);
const bf16 = parseHFConfig(cfg);
const withDtype = (mc: ModelConfig, dtype: string): ModelConfig => {
  const b = kvCacheDtypeBytes(dtype);
  return b === undefined ? mc : { ...mc, kvBytesPerElement: b };
};
const blocks = (mc: ModelConfig): number => calculateKVBlocks(mc, h100, params, { tp: 1, blockSize: 16, gpuMemoryUtilization: 0.9 });

describe('--kv-cache-dtype', () => {
  it('bytes per element of each value; auto = the model dtype', () => {
    expect(KV_CACHE_DTYPES.map((d) => kvCacheDtypeBytes(d))).toEqual([undefined, 1, 1, 1, 2, 2, 4]);
    expect(withDtype(bf16, 'auto')).toBe(bf16);
  });

  it('fp8 doubles the auto-sized KV blocks of llama-3.1-8b (H100, TP 1), from the memory formula by hand', () => {
    // Per token: 32 layers × 2 (K, V) × 8 KV heads × 128 head dim × bytes = 131,072 B at bf16, 65,536 B at fp8;
    // per 16-token block 2,097,152 B (2 MiB) and 1,048,576 B (1 MiB).
    expect(kvBytesPerToken(bf16, 1)).toBe(131072);
    expect(kvBytesPerToken(withDtype(bf16, 'fp8'), 1)).toBe(65536);
    // Memory left for KV: 80 GiB × 0.9 − (weights + 5.5 GiB activations + 0.15 GiB non-torch at TP 1); the
    // weights do not depend on the KV dtype.
    const allocatable = Math.trunc((80 * 0.9 - (modelWeightBytes(bf16, params) / GIB + 5.5 + 0.15)) * GIB);
    const atBf16 = Math.trunc(allocatable / 2097152);
    const atFp8 = Math.trunc(allocatable / 1048576);
    expect(blocks(bf16)).toBe(26312);
    expect(atBf16).toBe(26312);
    expect(blocks(withDtype(bf16, 'fp8'))).toBe(atFp8);
    // Halving the block doubles the count (plus the one block a remainder of at least 1 MiB holds).
    expect(atFp8 - 2 * atBf16).toBe(Math.trunc((allocatable % 2097152) / 1048576));
    expect(atFp8).toBe(52625);
    expect(blocks(withDtype(bf16, 'fp8_e5m2'))).toBe(52625);
    expect(blocks(withDtype(bf16, 'bf16'))).toBe(26312);
    expect(blocks(withDtype(bf16, 'fp32'))).toBe(13156);
  });

  it('roofline and trained-physics read half the KV bytes at fp8: decode-heavy steps get cheaper', () => {
    const mc = model({ vocabSize: 128256 });
    const batch = stepBatchOf(times(64, () => req(512, 200, 4000, 1)));
    const rf = (m: ModelConfig): number => createRooflineModel({ model: m, hardware: h100, tp: 1, alpha: [0, 0, 0] }).stepTime(batch);
    const beta = [0.152128, 0.0, 1.36252915, 0.752037, 32.09546717, 4.41684444, 126.024825, 481.8613888, 0.0, 1.94710771];
    const tp = (m: ModelConfig): number => createTrainedPhysicsModel({ model: m, hardware: h100, tp: 1, alpha: [0, 0, 0], beta }).stepTime(batch);
    for (const price of [rf, tp]) {
      expect(price(withDtype(mc, 'bf16'))).toBe(price(mc));
      expect(price(withDtype(mc, 'fp8'))).toBeLessThan(price(mc));
    }
  });
});
