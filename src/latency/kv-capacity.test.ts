import { describe, expect, it } from 'vitest';
import { MODEL_CATALOG, type CatalogModelName } from '../config/catalog/models.js';
import { LatencyConfigError } from './errors.js';
import { extractKVCapacityParams, parseHFConfig, type KVCapacityParams } from './hf-config.js';
import { applyRopeScaling, calculateKVBlocks, kvBytesPerToken, resolveMaxModelLen } from './kv-capacity.js';
import { model } from './test-fixtures.js';
import type { HardwareConfig } from './types.js';

/** Expected block counts were produced by running the reference's CalculateKVBlocks on the bundled configs. */

const h100: HardwareConfig = { TFlopsPeak: 989.5, TFlopsFP8: 1979.0, BwPeakTBs: 3.35, mfuPrefill: 0.45, mfuDecode: 0.3, MemoryGiB: 80 };
const a100: HardwareConfig = { TFlopsPeak: 312, TFlopsFP8: 0, BwPeakTBs: 2.039, mfuPrefill: 0.38, mfuDecode: 0.18, MemoryGiB: 80 };
const l40s: HardwareConfig = { TFlopsPeak: 362.05, TFlopsFP8: 1466, BwPeakTBs: 0.864, mfuPrefill: 0.32, mfuDecode: 0.08, MemoryGiB: 48 };

function blocks(name: CatalogModelName, hw: HardwareConfig, tp: number, dp = 1, util = 0.9): number {
  const cfg = MODEL_CATALOG[name].config;
  return calculateKVBlocks(parseHFConfig(cfg), hw, extractKVCapacityParams(cfg), { tp, dp, blockSize: 16, gpuMemoryUtilization: util });
}

function errorOf(f: () => unknown): LatencyConfigError {
  try {
    f();
  } catch (e) {
    if (e instanceof LatencyConfigError) return e;
    throw e;
  }
  throw new Error('expected a LatencyConfigError');
}

describe('calculateKVBlocks (reference values)', () => {
  it('llama-3.1-8b on H100 at TP 1/2/4 (blocks grow ~tp²)', () => {
    expect([1, 2, 4].map((tp) => blocks('llama-3.1-8b-instruct', h100, tp))).toEqual([26312, 125278, 543011]);
  });

  it('mixtral-8x7b (MoE activation budget; ×dp)', () => {
    expect(blocks('mixtral-8x7b-v0.1', h100, 2)).toBe(48956);
    expect(blocks('mixtral-8x7b-v0.1', h100, 2, 2)).toBe(97912);
  });

  it.each([
    ['qwen2.5-7b-instruct', 1, 61048],
    ['codellama-34b-instruct-hf', 2, 50822],
    ['llama-3.1-70b-instruct', 4, 121801],
    ['yi-34b', 2, 40001],
    ['mistral-nemo-instruct-2407', 1, 17512],
    ['qwen3-14b', 1, 15909],
    ['qwen3-30b-a3b', 1, 5276],
    ['deepseek-v2-lite', 1, 74312],
    ['glm-5.2-fp8', 16, 326966],
    ['llama-4-scout-17b-16e-instruct-fp8-dynamic', 2, 27345],
    ['llama-2-7b-hf', 1, 6886],
  ] as Array<[CatalogModelName, number, number]>)('%s on H100 at TP=%i: %i blocks', (name, tp, want) => {
    expect(blocks(name, h100, tp)).toBe(want);
  });

  it('other GPUs and utilisations', () => {
    expect(blocks('llama-3.1-8b-instruct', a100, 1, 1, 0.8)).toBe(22216);
    expect(blocks('llama-3.1-8b-instruct', l40s, 2, 1, 0.95)).toBe(71211);
  });

  it('suggests the minimum TP when the model does not fit', () => {
    const cases: Array<[CatalogModelName, number, number]> = [
      ['mixtral-8x7b-v0.1', 1, 2],
      ['llama-3.1-70b-instruct', 1, 2],
      ['glm-5.2-fp8', 8, 10],
    ];
    for (const [name, tp, minTP] of cases) {
      const e = errorOf(() => blocks(name, h100, tp));
      expect(e.code).toBe('INSUFFICIENT_GPU_MEMORY');
      expect(e.message).toContain(`Minimum GPUs required per instance: ${minTP}`);
    }
  });
});

describe('calculateKVBlocks validation', () => {
  const dense: KVCapacityParams = { isMoE: false, numLocalExperts: 0, tieWordEmbeddings: false, hiddenAct: 'silu', moeExpertFFNDim: 0, sharedExpertFFNDim: 0 };
  const mc = model({ vocabSize: 128256 });
  const opts = { tp: 1, blockSize: 16, gpuMemoryUtilization: 0.9 };

  it('rejects non-SwiGLU activations and bad inputs, naming the field', () => {
    const field = (f: () => unknown): string => errorOf(f).field;
    expect(field(() => calculateKVBlocks(mc, h100, { ...dense, hiddenAct: 'gelu' }, opts))).toBe('hidden_act');
    expect(field(() => calculateKVBlocks(mc, h100, dense, { ...opts, gpuMemoryUtilization: 1.5 }))).toBe('gpuMemoryUtilization');
    expect(field(() => calculateKVBlocks(mc, h100, dense, { ...opts, blockSize: 0 }))).toBe('blockSize');
    expect(field(() => calculateKVBlocks(model({ vocabSize: 0 }), h100, dense, opts))).toBe('vocab_size');
    expect(field(() => calculateKVBlocks(mc, { ...h100, MemoryGiB: 0 }, dense, opts))).toBe('MemoryGiB');
    expect(field(() => calculateKVBlocks(mc, h100, dense, { ...opts, tp: 3 }))).toBe('tp');
  });

  it('accepts the SwiGLU family and an unset activation identically', () => {
    const base = calculateKVBlocks(mc, h100, dense, opts);
    for (const act of ['swiglu', 'geglu', 'situ', '']) {
      expect(calculateKVBlocks(mc, h100, { ...dense, hiddenAct: act }, opts)).toBe(base);
    }
  });

  it('suggests 10 GPUs for a DeepSeek-V3-like FP8 model at TP=2 (reference TestCalculateKVBlocks_InsufficientMemory)', () => {
    const v3 = model({
      numLayers: 61, hiddenDim: 7168, numHeads: 128, numKVHeads: 128, vocabSize: 129280, bytesPerParam: 1,
      intermediateDim: 18432, numLocalExperts: 256, numExpertsPerTok: 8, moeExpertFFNDim: 2048, sharedExpertFFNDim: 2048,
    });
    const p: KVCapacityParams = { ...dense, isMoE: true, numLocalExperts: 256, moeExpertFFNDim: 2048, sharedExpertFFNDim: 2048 };
    expect(errorOf(() => calculateKVBlocks(v3, h100, p, { ...opts, tp: 2 })).message).toContain('Minimum GPUs required per instance: 10');
    expect(calculateKVBlocks(v3, h100, p, { ...opts, tp: 16 })).toBeGreaterThan(0);
    // dp scales MoE capacity exactly; a dense model is never scaled.
    const one = calculateKVBlocks(v3, h100, p, { ...opts, tp: 16 });
    expect(calculateKVBlocks(v3, h100, p, { ...opts, tp: 16, dp: 4 })).toBe(4 * one);
    expect(calculateKVBlocks(mc, h100, dense, { ...opts, dp: 2 })).toBe(calculateKVBlocks(mc, h100, dense, opts));
  });

  it('subtracts an adapter reservation like weights', () => {
    const base = calculateKVBlocks(mc, h100, dense, opts);
    const perBlock = 32 * 2 * 128 * 8 * 2 * 16; // layers · K/V · head dim · KV heads · bytes · tokens
    const reserved = 2 * 2 ** 30;
    const lost = base - calculateKVBlocks(mc, h100, dense, { ...opts, adapterReservedBytes: reserved });
    expect(Math.abs(lost - reserved / perBlock)).toBeLessThanOrEqual(1);
  });
});

describe('kvBytesPerToken', () => {
  it('is L·2·headDim·KVH·bytes/tp, with an explicit head_dim when given', () => {
    expect(kvBytesPerToken(model(), 1)).toBe(32 * 2 * 128 * 8 * 2);
    expect(kvBytesPerToken(model(), 4)).toBe((32 * 2 * 128 * 8 * 2) / 4);
    expect(kvBytesPerToken(model({ headDim: 256 }), 1)).toBe(32 * 2 * 256 * 8 * 2);
    expect(kvBytesPerToken(model({ numKVHeads: 4 }), 8)).toBe((32 * 2 * 128 * 4 * 2) / 8);
  });

  it('divides by tp even when KV heads < tp (the reference\'s optimistic approximation)', () => {
    const tiny = model({ numLayers: 2, numHeads: 32, numKVHeads: 4, hiddenDim: 128, intermediateDim: 256 });
    expect(kvBytesPerToken(tiny, 8)).toBe(16);
    expect(() => kvBytesPerToken(model({ numKVHeads: 3, hiddenDim: 64, numLayers: 1 }), 8)).not.toThrow();
    expect(errorOf(() => kvBytesPerToken(model({ numKVHeads: 3 }), 2)).field).toBe('tp');
  });

  it('is one TP-replicated latent per layer for MLA models', () => {
    expect(kvBytesPerToken(parseHFConfig(MODEL_CATALOG['deepseek-v2-lite'].config), 4)).toBe((512 + 64) * 27 * 2);
    const glm = parseHFConfig(MODEL_CATALOG['glm-5.2-fp8'].config);
    for (const tp of [1, 2, 16]) expect(kvBytesPerToken(glm, tp)).toBe((512 + 64) * 78 * 2);
  });
});

describe('applyRopeScaling (reference TestApplyRopeScaling cases)', () => {
  it.each([
    ['absent', 8192, '', null, 8192, false],
    ['linear ×4', 8192, '', { type: 'linear', factor: 4.0 }, 32768, true],
    ['dynamic ×2', 4096, '', { type: 'dynamic', factor: 2.0 }, 8192, true],
    ['mrope ×8', 8192, '', { type: 'mrope', factor: 8.0 }, 65536, true],
    ['su excluded', 8192, '', { type: 'su', factor: 4.0 }, 8192, false],
    ['longrope excluded', 8192, '', { type: 'longrope', factor: 4.0 }, 8192, false],
    ['llama3 excluded', 8192, '', { type: 'llama3', factor: 4.0 }, 8192, false],
    ['gemma3 skipped', 8192, 'gemma3', { type: 'linear', factor: 4.0 }, 8192, false],
    ['gemma3_text skipped', 8192, 'gemma3_text', { type: 'linear', factor: 4.0 }, 8192, false],
    ['yarn uses original', 8192, '', { type: 'yarn', factor: 4.0, original_max_position_embeddings: 2048 }, 8192, true],
    ['yarn without original', 4096, '', { type: 'yarn', factor: 2.0 }, 8192, true],
    ['string', 8192, '', 'not-a-map', 8192, false],
    ['array', 8192, '', [1, 2], 8192, false],
    ['string factor', 8192, '', { type: 'linear', factor: 'four' }, 8192, false],
    ['factor 1', 8192, '', { type: 'linear', factor: 1.0 }, 8192, false],
    ['no factor', 8192, '', { type: 'linear' }, 8192, false],
    ['null type', 4096, '', { type: null, factor: 2.0 }, 8192, true],
    ['rope_type key', 4096, '', { rope_type: 'linear', factor: 3.0 }, 12288, true],
    ['NaN factor', 8192, '', { type: 'linear', factor: Number.NaN }, 8192, false],
    ['overflow', 2 ** 62, '', { type: 'linear', factor: 4.0 }, 2 ** 62, false],
    ['zero base', 0, '', { type: 'linear', factor: 4.0 }, 0, false],
  ] as Array<[string, number, string, unknown, number, boolean]>)('%s', (_name, maxPos, modelType, rope, scaled, applied) => {
    expect(applyRopeScaling(maxPos, modelType, rope)).toEqual({ scaled, applied });
  });
});

describe('resolveMaxModelLen', () => {
  const cfg = (name: CatalogModelName) => parseHFConfig(MODEL_CATALOG[name].config);

  it('derives from max_position_embeddings and caps at KV capacity', () => {
    const r = resolveMaxModelLen(cfg('llama-3.1-8b-instruct'), 26312, 16, undefined);
    expect(r.maxModelLen).toBe(131072); // 26312·16 = 420992 tokens of KV: no cap
    expect(r.warnings).toEqual([]);
    const capped = resolveMaxModelLen(cfg('llama-3.1-8b-instruct'), 7463, 16, undefined);
    expect(capped.maxModelLen).toBe(7463 * 16);
    expect(capped.warnings[0]).toContain('capping to 119408 tokens');
  });

  it('scales yarn from the original length and warns about excluded types', () => {
    expect(resolveMaxModelLen(cfg('deepseek-v2-lite'), 1_000_000, 16, undefined).maxModelLen).toBe(163840);
    const r = resolveMaxModelLen(cfg('llama-3.1-70b-instruct'), 1_000_000, 16, undefined);
    expect(r.maxModelLen).toBe(131072);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toContain('rope_scaling.factor present but not applied');
  });

  it('uses an explicit value as is (0 = unlimited, no derivation) but still caps it', () => {
    const mc = cfg('qwen3-14b');
    expect(resolveMaxModelLen(mc, 15909, 16, 0).maxModelLen).toBe(0);
    expect(resolveMaxModelLen(mc, 15909, 16, 2048).maxModelLen).toBe(2048);
    expect(resolveMaxModelLen(mc, 100, 16, 2048).maxModelLen).toBe(1600);
    expect(resolveMaxModelLen(mc, 100, 16, 1601).maxModelLen).toBe(1600); // ceil(1601/16) = 101 blocks > 100
    expect(resolveMaxModelLen(mc, 100, 16, 1600).maxModelLen).toBe(1600);
  });

  it('is 0 when the config has no max_position_embeddings, and rejects a negative explicit value', () => {
    expect(resolveMaxModelLen(model(), 100, 16, undefined).maxModelLen).toBe(0);
    expect(errorOf(() => resolveMaxModelLen(model(), 100, 16, -1)).code).toBe('INVALID_MAX_MODEL_LEN');
  });
});
