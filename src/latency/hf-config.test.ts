import { describe, expect, it } from 'vitest';
import { MODEL_CATALOG } from '../config/catalog/models.js';
import { LatencyConfigError } from './errors.js';
import {
  applyWeightPrecisionFallback,
  extractKVCapacityParams,
  inferWeightBytesFromModelName,
  weightPrecisionWarning,
  parseHFConfig,
  quantizedWeightBytes,
} from './hf-config.js';
import type { ModelConfig } from './types.js';

/** ModelConfig fields the reference's GetModelConfig returns for each bundled config.json (captured by running it). */
const GO_PARSED: Readonly<Record<string, Partial<ModelConfig>>> = {
  'codellama-34b-instruct-hf': {
    numLayers: 48, hiddenDim: 8192, numHeads: 64, numKVHeads: 8, vocabSize: 32000, bytesPerParam: 2,
    intermediateDim: 22016, numLocalExperts: 0, numExpertsPerTok: 0, moeExpertFFNDim: 0,
    sharedExpertFFNDim: 0, interleaveMoELayerStep: 0, denseIntermediateDim: 0, hiddenAct: 'silu',
    weightBytesPerParam: 0, headDim: 0, kvLoraRank: 0, qkRopeHeadDim: 0, firstKDenseReplace: 0
  },
  'deepseek-v2-lite': {
    numLayers: 27, hiddenDim: 2048, numHeads: 16, numKVHeads: 16, vocabSize: 102400, bytesPerParam: 2,
    intermediateDim: 10944, numLocalExperts: 64, numExpertsPerTok: 6, moeExpertFFNDim: 1408,
    sharedExpertFFNDim: 2816, interleaveMoELayerStep: 0, denseIntermediateDim: 0, hiddenAct: 'silu',
    weightBytesPerParam: 0, headDim: 0, kvLoraRank: 512, qkRopeHeadDim: 64, firstKDenseReplace: 1
  },
  'glm-5.2-fp8': {
    numLayers: 78, hiddenDim: 6144, numHeads: 64, numKVHeads: 64, vocabSize: 154880, bytesPerParam: 2,
    intermediateDim: 12288, numLocalExperts: 256, numExpertsPerTok: 8, moeExpertFFNDim: 2048,
    sharedExpertFFNDim: 2048, interleaveMoELayerStep: 0, denseIntermediateDim: 0, hiddenAct: 'silu',
    weightBytesPerParam: 1, headDim: 192, kvLoraRank: 512, qkRopeHeadDim: 64, firstKDenseReplace: 3
  },
  'llama-2-7b-hf': {
    numLayers: 32, hiddenDim: 4096, numHeads: 32, numKVHeads: 32, vocabSize: 32000, bytesPerParam: 2,
    intermediateDim: 11008, numLocalExperts: 0, numExpertsPerTok: 0, moeExpertFFNDim: 0,
    sharedExpertFFNDim: 0, interleaveMoELayerStep: 0, denseIntermediateDim: 0, hiddenAct: 'silu',
    weightBytesPerParam: 0, headDim: 0, kvLoraRank: 0, qkRopeHeadDim: 0, firstKDenseReplace: 0
  },
  'llama-3.1-70b-instruct': {
    numLayers: 80, hiddenDim: 8192, numHeads: 64, numKVHeads: 8, vocabSize: 128256, bytesPerParam: 2,
    intermediateDim: 28672, numLocalExperts: 0, numExpertsPerTok: 0, moeExpertFFNDim: 0,
    sharedExpertFFNDim: 0, interleaveMoELayerStep: 0, denseIntermediateDim: 0, hiddenAct: 'silu',
    weightBytesPerParam: 0, headDim: 0, kvLoraRank: 0, qkRopeHeadDim: 0, firstKDenseReplace: 0
  },
  'llama-3.1-8b-instruct': {
    numLayers: 32, hiddenDim: 4096, numHeads: 32, numKVHeads: 8, vocabSize: 128256, bytesPerParam: 2,
    intermediateDim: 14336, numLocalExperts: 0, numExpertsPerTok: 0, moeExpertFFNDim: 0,
    sharedExpertFFNDim: 0, interleaveMoELayerStep: 0, denseIntermediateDim: 0, hiddenAct: 'silu',
    weightBytesPerParam: 0, headDim: 0, kvLoraRank: 0, qkRopeHeadDim: 0, firstKDenseReplace: 0
  },
  'llama-4-scout-17b-16e-instruct-fp8-dynamic': {
    numLayers: 48, hiddenDim: 5120, numHeads: 40, numKVHeads: 8, vocabSize: 202048, bytesPerParam: 2,
    intermediateDim: 8192, numLocalExperts: 16, numExpertsPerTok: 1, moeExpertFFNDim: 0,
    sharedExpertFFNDim: 0, interleaveMoELayerStep: 1, denseIntermediateDim: 16384, hiddenAct: 'silu',
    weightBytesPerParam: 1, headDim: 128, kvLoraRank: 0, qkRopeHeadDim: 0, firstKDenseReplace: 0
  },
  'mistral-nemo-instruct-2407': {
    numLayers: 40, hiddenDim: 5120, numHeads: 32, numKVHeads: 8, vocabSize: 131072, bytesPerParam: 2,
    intermediateDim: 14336, numLocalExperts: 0, numExpertsPerTok: 0, moeExpertFFNDim: 0,
    sharedExpertFFNDim: 0, interleaveMoELayerStep: 0, denseIntermediateDim: 0, hiddenAct: 'silu',
    weightBytesPerParam: 0, headDim: 128, kvLoraRank: 0, qkRopeHeadDim: 0, firstKDenseReplace: 0
  },
  'mixtral-8x7b-v0.1': {
    numLayers: 32, hiddenDim: 4096, numHeads: 32, numKVHeads: 8, vocabSize: 32000, bytesPerParam: 2,
    intermediateDim: 14336, numLocalExperts: 8, numExpertsPerTok: 2, moeExpertFFNDim: 0,
    sharedExpertFFNDim: 0, interleaveMoELayerStep: 0, denseIntermediateDim: 0, hiddenAct: 'silu',
    weightBytesPerParam: 0, headDim: 0, kvLoraRank: 0, qkRopeHeadDim: 0, firstKDenseReplace: 0
  },
  'qwen2.5-7b-instruct': {
    numLayers: 28, hiddenDim: 3584, numHeads: 28, numKVHeads: 4, vocabSize: 152064, bytesPerParam: 2,
    intermediateDim: 18944, numLocalExperts: 0, numExpertsPerTok: 0, moeExpertFFNDim: 0,
    sharedExpertFFNDim: 0, interleaveMoELayerStep: 0, denseIntermediateDim: 0, hiddenAct: 'silu',
    weightBytesPerParam: 0, headDim: 0, kvLoraRank: 0, qkRopeHeadDim: 0, firstKDenseReplace: 0
  },
  'qwen3-14b': {
    numLayers: 40, hiddenDim: 5120, numHeads: 40, numKVHeads: 8, vocabSize: 151936, bytesPerParam: 2,
    intermediateDim: 17408, numLocalExperts: 0, numExpertsPerTok: 0, moeExpertFFNDim: 0,
    sharedExpertFFNDim: 0, interleaveMoELayerStep: 0, denseIntermediateDim: 0, hiddenAct: 'silu',
    weightBytesPerParam: 0, headDim: 128, kvLoraRank: 0, qkRopeHeadDim: 0, firstKDenseReplace: 0
  },
  'qwen3-30b-a3b': {
    numLayers: 48, hiddenDim: 2048, numHeads: 32, numKVHeads: 4, vocabSize: 151936, bytesPerParam: 2,
    intermediateDim: 6144, numLocalExperts: 128, numExpertsPerTok: 8, moeExpertFFNDim: 768,
    sharedExpertFFNDim: 0, interleaveMoELayerStep: 0, denseIntermediateDim: 0, hiddenAct: 'silu',
    weightBytesPerParam: 0, headDim: 128, kvLoraRank: 0, qkRopeHeadDim: 0, firstKDenseReplace: 0
  },
  'yi-34b': {
    numLayers: 60, hiddenDim: 7168, numHeads: 56, numKVHeads: 8, vocabSize: 64000, bytesPerParam: 2,
    intermediateDim: 20480, numLocalExperts: 0, numExpertsPerTok: 0, moeExpertFFNDim: 0,
    sharedExpertFFNDim: 0, interleaveMoELayerStep: 0, denseIntermediateDim: 0, hiddenAct: 'silu',
    weightBytesPerParam: 0, headDim: 0, kvLoraRank: 0, qkRopeHeadDim: 0, firstKDenseReplace: 0
  },
};

const base = { num_hidden_layers: 32, hidden_size: 4096, num_attention_heads: 32, torch_dtype: 'bfloat16' };

function errorOf(f: () => unknown): LatencyConfigError {
  try {
    f();
  } catch (e) {
    if (e instanceof LatencyConfigError) return e;
    throw e;
  }
  throw new Error('expected a LatencyConfigError');
}

describe('parseHFConfig on the catalog models', () => {
  it.each(Object.keys(GO_PARSED))('%s parses to the reference ModelConfig', (name) => {
    const entry = MODEL_CATALOG[name as keyof typeof MODEL_CATALOG];
    expect(entry).toBeDefined();
    expect(parseHFConfig(entry.config, name)).toMatchObject(GO_PARSED[name]!);
  });

  it('covers every catalog model from the reference (extra catalog models are checked below)', () => {
    const extra = ['llama-2-70b-hf'];
    expect(Object.keys(MODEL_CATALOG).filter((k) => !extra.includes(k)).sort()).toEqual(Object.keys(GO_PARSED).sort());
  });

  it('parses the extra catalog model llama-2-70b-hf (GQA, 80 layers)', () => {
    const mc = parseHFConfig(MODEL_CATALOG['llama-2-70b-hf'].config, 'llama-2-70b-hf');
    expect(mc).toMatchObject({ numLayers: 80, hiddenDim: 8192, numHeads: 64, numKVHeads: 8, intermediateDim: 28672, bytesPerParam: 2, maxPositionEmbeddings: 4096 });
  });

  it('merges text_config over the top level (Llama 4 Scout)', () => {
    const mc = parseHFConfig(MODEL_CATALOG['llama-4-scout-17b-16e-instruct-fp8-dynamic'].config);
    expect(mc.modelType).toBe('llama4_text');
    expect(mc.maxPositionEmbeddings).toBe(10485760);
    expect(mc.ropeScaling).toMatchObject({ rope_type: 'llama3', factor: 16 });
    // quantization_config sits at the top level, outside text_config, and still applies.
    expect(mc.weightBytesPerParam).toBe(1);
  });

  it('reads tie_word_embeddings, max_position_embeddings, rope_scaling and model_type', () => {
    const mc = parseHFConfig(MODEL_CATALOG['deepseek-v2-lite'].config);
    expect([mc.tieWordEmbeddings, mc.maxPositionEmbeddings, mc.modelType]).toEqual([false, 163840, 'deepseek_v2']);
    expect(mc.ropeScaling).toMatchObject({ type: 'yarn', factor: 40, original_max_position_embeddings: 4096 });
    expect(parseHFConfig(MODEL_CATALOG['qwen3-14b'].config).ropeScaling).toBeNull();
  });
});

describe('parseHFConfig field rules', () => {
  it('falls back num_key_value_heads → num_kv_heads → multi_query_group_num → num_attention_heads', () => {
    expect(parseHFConfig({ ...base, num_kv_heads: 4 }).numKVHeads).toBe(4);
    expect(parseHFConfig({ ...base, multi_query_group_num: 2 }).numKVHeads).toBe(2);
    expect(parseHFConfig({ ...base, num_key_value_heads: 8, num_kv_heads: 4 }).numKVHeads).toBe(8);
    expect(parseHFConfig({ ...base, num_key_value_heads: null }).numKVHeads).toBe(32);
  });

  it('maps torch_dtype (or dtype) to bytes, unknown or absent to 0', () => {
    const bytes = (extra: object): number => parseHFConfig({ ...base, torch_dtype: undefined, ...extra }).bytesPerParam;
    expect(bytes({ torch_dtype: 'float32' })).toBe(4);
    expect(bytes({ torch_dtype: 'float16' })).toBe(2);
    expect(bytes({ torch_dtype: 'nf4' })).toBe(1);
    expect(bytes({ dtype: 'bfloat16' })).toBe(2);
    expect(bytes({ torch_dtype: 'float16', dtype: 'float32' })).toBe(2);
    expect(bytes({ torch_dtype: 'complex64', dtype: 'float32' })).toBe(0);
    expect(bytes({ torch_dtype: 'constructor' })).toBe(0);
    expect(bytes({})).toBe(0);
  });

  it('takes intermediate_size, else ffn_hidden_size', () => {
    expect(parseHFConfig({ ...base, ffn_hidden_size: 13696 }).intermediateDim).toBe(13696);
    expect(parseHFConfig({ ...base, intermediate_size: 11008, ffn_hidden_size: 13696 }).intermediateDim).toBe(11008);
  });

  it('takes the first expert count >= 2 in vLLM key order', () => {
    expect(parseHFConfig({ ...base, num_experts: 128, num_local_experts: 8 }).numLocalExperts).toBe(128);
    expect(parseHFConfig({ ...base, num_experts: 1, n_routed_experts: 64 }).numLocalExperts).toBe(64);
    expect(parseHFConfig({ ...base, num_local_experts: 1 }).numLocalExperts).toBe(0);
    expect(parseHFConfig({ ...base, num_routed_experts: 4 }).numLocalExperts).toBe(4);
  });

  it('derives the shared-expert width from an explicit total or count × per-expert width', () => {
    expect(parseHFConfig({ ...base, shared_expert_intermediate_size: 5632, n_shared_experts: 2 }).sharedExpertFFNDim).toBe(5632);
    expect(parseHFConfig({ ...base, n_shared_experts: 2, moe_intermediate_size: 1408 }).sharedExpertFFNDim).toBe(2816);
    expect(parseHFConfig({ ...base, n_shared_experts: 2, intermediate_size: 1000 }).sharedExpertFFNDim).toBe(2000);
  });

  it('refuses fractional sizes (the reference truncates them: issue 27) and ignores wrongly typed values like the reference', () => {
    expect(errorOf(() => parseHFConfig({ ...base, num_hidden_layers: 32.9 })).field).toBe('num_hidden_layers');
    expect(parseHFConfig({ ...base, vocab_size: '32000', hidden_act: 5 })).toMatchObject({ vocabSize: 0, hiddenAct: '' });
  });

  it('rejects missing core dimensions, naming the key', () => {
    const e = errorOf(() => parseHFConfig({ hidden_size: 4096, num_attention_heads: 32 }, 'my/config.json'));
    expect([e.code, e.field]).toEqual(['INVALID_HF_CONFIG', 'num_hidden_layers']);
    expect(e.message).toContain('my/config.json');
    expect(errorOf(() => parseHFConfig({ ...base, num_attention_heads: 0 })).field).toBe('num_attention_heads');
    expect(errorOf(() => parseHFConfig([base])).code).toBe('INVALID_HF_CONFIG');
  });

  it('rejects negative shape fields', () => {
    for (const key of ['head_dim', 'kv_lora_rank', 'qk_rope_head_dim', 'first_k_dense_replace']) {
      const e = errorOf(() => parseHFConfig({ ...base, [key]: -1 }));
      expect([e.code, e.field]).toEqual(['INVALID_HF_CONFIG', key]);
    }
  });
});

describe('quantization_config → weight bytes', () => {
  it('uses bits (number or integer string), then fp8, then compressed-tensors groups in sorted key order', () => {
    expect(quantizedWeightBytes({ quant_method: 'gptq', bits: 4 })).toBe(0.5);
    expect(quantizedWeightBytes({ quant_method: 'awq', bits: '4' })).toBe(0.5);
    expect(quantizedWeightBytes({ quant_method: 'gptq', bits: 'four' })).toBe(0);
    expect(quantizedWeightBytes({ quant_method: 'fp8', bits: 8 })).toBe(1);
    expect(quantizedWeightBytes({ quant_method: 'FP8' })).toBe(1);
    expect(quantizedWeightBytes({ quant_method: 'gptq', bits: 0 })).toBe(0);
    const groups = {
      group_1: { weights: { num_bits: 4 } },
      group_0: { weights: { num_bits: 8 } },
      group_2: { weights: null },
    };
    expect(quantizedWeightBytes({ quant_method: 'compressed-tensors', config_groups: groups })).toBe(1);
    expect(quantizedWeightBytes({ quant_method: 'compressed-tensors', config_groups: { b: { weights: {} }, c: { weights: { num_bits: 4 } } } })).toBe(0.5);
    expect(quantizedWeightBytes({ quant_method: 'compressed-tensors' })).toBe(0);
    expect(quantizedWeightBytes({ quant_method: 'bitsandbytes' })).toBe(0);
  });

  it('is applied by parseHFConfig and keeps the compute dtype separate', () => {
    const mc = parseHFConfig({ ...base, quantization_config: { quant_method: 'compressed-tensors', config_groups: { g: { weights: { num_bits: 8 } } } } });
    expect([mc.weightBytesPerParam, mc.bytesPerParam]).toEqual([1, 2]);
  });
});

describe('model-name weight precision fallback', () => {
  it.each([
    ['redhatai/llama-3.3-70b-instruct-quantized.w4a16', 0.5],
    ['redhatai/llama-3.3-70b-instruct-quantized.w8a8', 1.0],
    ['RedHatAI/Llama-3.3-70B-Instruct-quantized.W4A16', 0.5],
    ['redhatai/phi-4-FP8-dynamic', 1.0],
    ['meta-llama/llama-4-maverick-17b-128e-instruct-fp8', 1.0],
    ['neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8', 1.0],
    ['org/model-quantized.w2a16', 0.25],
    ['qwen/qwen3-14b', 0],
    ['meta-llama/Llama-3.1-8B-Instruct', 0],
    ['org/fp8model', 0],
  ])('%s → %d', (name, want) => {
    expect(inferWeightBytesFromModelName(name)).toBe(want);
  });

  it('only fills a zero weight precision', () => {
    const plain = parseHFConfig(base);
    expect(applyWeightPrecisionFallback(plain, 'x/model-w4a16').weightBytesPerParam).toBe(0.5);
    const fp8 = parseHFConfig({ ...base, quantization_config: { quant_method: 'fp8' } });
    expect(applyWeightPrecisionFallback(fp8, 'x/model-w4a16').weightBytesPerParam).toBe(1);
  });

  it('warns when precision stays unknown for a quantized-looking config', () => {
    const unknownQuant = { ...base, quantization_config: { quant_method: 'bitsandbytes' } };
    expect(weightPrecisionWarning(parseHFConfig(unknownQuant), unknownQuant)).toContain('could not be determined');
    const int8 = { ...base, torch_dtype: 'int8' };
    expect(weightPrecisionWarning(parseHFConfig(int8), int8)).toContain('1 byte(s)/param');
    expect(weightPrecisionWarning(parseHFConfig(base), base)).toBeUndefined();
  });
});

describe('extractKVCapacityParams', () => {
  it('reads MoE facts for capacity sizing', () => {
    expect(extractKVCapacityParams(MODEL_CATALOG['deepseek-v2-lite'].config)).toEqual({
      isMoE: true,
      numLocalExperts: 64,
      tieWordEmbeddings: false,
      hiddenAct: 'silu',
      moeExpertFFNDim: 1408,
      sharedExpertFFNDim: 2816,
    });
    expect(extractKVCapacityParams(MODEL_CATALOG['llama-3.1-8b-instruct'].config)).toMatchObject({ isMoE: false, numLocalExperts: 0 });
  });

  it('rejects a config that looks MoE but has no total expert count', () => {
    for (const key of ['n_shared_experts', 'num_experts_per_tok']) {
      const e = errorOf(() => extractKVCapacityParams({ ...base, [key]: 2 }));
      expect([e.code, e.field]).toEqual(['MOE_EXPERT_COUNT_MISSING', key]);
    }
  });

  it('treats a single expert as dense', () => {
    expect(extractKVCapacityParams({ ...base, num_local_experts: 1 }).isMoE).toBe(false);
  });
});

describe('sizes and counts must be whole numbers >= 0', () => {
  const base = { num_hidden_layers: 32, hidden_size: 4096, num_attention_heads: 32, num_key_value_heads: 8, intermediate_size: 14336, vocab_size: 128256 };
  it('refuses a fractional hidden size and a negative expert count, naming the key and the fix', () => {
    expect(() => parseHFConfig({ ...base, hidden_size: 4096.5 }, 'x/config.json')).toThrow(/x\/config\.json: "hidden_size" must be a whole number >= 0 \(a size or count\), got 4096\.5; fix the config/);
    expect(() => extractKVCapacityParams({ ...base, num_local_experts: -8, num_experts_per_tok: 2 }, 'c.json')).toThrow(/"num_local_experts" must be a whole number >= 0.*got -8/);
    expect(() => parseHFConfig({ ...base, text_config: { num_experts: 1.5 } })).toThrow(/"num_experts"/);
    expect(parseHFConfig({ ...base, head_dim: null }).hiddenDim).toBe(4096);
  });
});
