/**
 * config.json families that name things their own way (issue 28, item 3), read with `families: true` as
 * corrected-physics does. The configs are written here after the public HuggingFace ones (OPT-6.7b/350m,
 * GPT-NeoX-20B, Falcon-7B/40B, Mixtral-8x7B, Qwen1.5-MoE-A2.7B, DeepSeek-V2-Lite), trimmed to the keys that
 * matter plus a few that must be ignored.
 */
import { describe, expect, it } from 'vitest';
import { GPU_CATALOG } from '../config/catalog/hardware.js';
import { MODEL_CATALOG } from '../config/catalog/models.js';
import { GPU_PHYSICS } from '../config/catalog/gpu-physics.js';
import { architectureOf } from './architecture.js';
import { CORRECTED_PHYSICS_COEFFICIENTS, createCorrectedPhysicsModel } from './corrected-physics.js';
import { extractKVCapacityParams, parseHFConfig } from './hf-config.js';
import { calculateKVBlocks } from './kv-capacity.js';
import type { HardwareConfig, ModelConfig, StepBatch } from './types.js';

const OPT_67B = {
  _name_or_path: 'facebook/opt-6.7b', activation_function: 'relu', architectures: ['OPTForCausalLM'], do_layer_norm_before: true,
  enable_bias: true, ffn_dim: 16384, hidden_size: 4096, max_position_embeddings: 2048, model_type: 'opt', num_attention_heads: 32,
  num_hidden_layers: 32, torch_dtype: 'float16', vocab_size: 50272, word_embed_proj_dim: 4096,
};
const OPT_350M = { ...OPT_67B, ffn_dim: 4096, hidden_size: 1024, num_attention_heads: 16, num_hidden_layers: 24, word_embed_proj_dim: 512, do_layer_norm_before: false };
const NEOX_20B = {
  architectures: ['GPTNeoXForCausalLM'], hidden_act: 'gelu_fast', hidden_size: 6144, intermediate_size: 24576, max_position_embeddings: 2048,
  model_type: 'gpt_neox', num_attention_heads: 64, num_hidden_layers: 44, rotary_emb_base: 10000, rotary_pct: 0.25, tie_word_embeddings: false,
  torch_dtype: 'float16', use_parallel_residual: true, vocab_size: 50432,
};
const FALCON_7B = {
  alibi: false, architectures: ['FalconForCausalLM'], bias: false, hidden_size: 4544, model_type: 'falcon', multi_query: true,
  new_decoder_architecture: false, num_attention_heads: 71, num_hidden_layers: 32, parallel_attn: true, torch_dtype: 'bfloat16', vocab_size: 65024,
};
/** The original RefinedWeb form of Falcon-40B (n_head / n_head_kv / n_layer). */
const FALCON_40B_OLD = {
  model_type: 'RefinedWeb', n_head: 128, n_head_kv: 8, n_layer: 60, hidden_size: 8192, new_decoder_architecture: true, parallel_attn: true,
  bias: false, torch_dtype: 'bfloat16', vocab_size: 65024,
};
const MIXTRAL = {
  model_type: 'mixtral', hidden_act: 'silu', hidden_size: 4096, intermediate_size: 14336, num_attention_heads: 32, num_experts_per_tok: 2,
  num_hidden_layers: 32, num_key_value_heads: 8, num_local_experts: 8, torch_dtype: 'bfloat16', vocab_size: 32000,
};
const QWEN_MOE = {
  model_type: 'qwen2_moe', hidden_act: 'silu', hidden_size: 2048, intermediate_size: 5632, moe_intermediate_size: 1408, num_experts: 60,
  num_experts_per_tok: 4, shared_expert_intermediate_size: 5632, decoder_sparse_step: 1, mlp_only_layers: [], num_attention_heads: 16,
  num_hidden_layers: 24, num_key_value_heads: 16, torch_dtype: 'bfloat16', vocab_size: 151936,
};
const DEEPSEEK_LITE = {
  model_type: 'deepseek_v2', hidden_act: 'silu', hidden_size: 2048, intermediate_size: 10944, moe_intermediate_size: 1408, n_routed_experts: 64,
  n_shared_experts: 2, num_experts_per_tok: 6, first_k_dense_replace: 1, moe_layer_freq: 1, num_attention_heads: 16, num_hidden_layers: 27,
  num_key_value_heads: 16, kv_lora_rank: 512, qk_rope_head_dim: 64, torch_dtype: 'bfloat16', vocab_size: 102400,
};

const fam = (raw: unknown): ModelConfig => parseHFConfig(raw, 'config.json', { families: true });
const H100: HardwareConfig = { ...GPU_CATALOG.H100, physics: GPU_PHYSICS.H100! };

/** One decode of one token at context 100 (weight-read bound for every model here). */
const decode: StepBatch = { count: 1, progress: Int32Array.of(100), newTokens: Int32Array.of(1), inputLen: Int32Array.of(50), outputLen: Int32Array.of(200) };
function gradient(mc: ModelConfig, tp: number, batch: StepBatch = decode): Record<string, number> {
  const m = createCorrectedPhysicsModel({ model: mc, hardware: H100, tp });
  const g = new Float64Array(CORRECTED_PHYSICS_COEFFICIENTS.length);
  m.linear!.stepGradient(batch, g);
  return Object.fromEntries(CORRECTED_PHYSICS_COEFFICIENTS.map((n, i) => [n, g[i]!]));
}

describe('OPT', () => {
  it('reads ffn_dim, ReLU without gate, word_embed_proj_dim and enable_bias', () => {
    const mc = fam(OPT_67B);
    expect(mc).toMatchObject({ numLayers: 32, hiddenDim: 4096, numHeads: 32, numKVHeads: 32, intermediateDim: 16384, hiddenAct: 'relu', bytesPerParam: 2, embedDim: 4096, linearBias: true });
    expect(architectureOf(mc).mlpMatrices).toBe(2);
    expect(fam({ ...OPT_67B, enable_bias: false }).linearBias).toBe(false);
  });

  it('is what the reference parser refuses (no intermediate_size) unless read as a family', () => {
    expect(parseHFConfig(OPT_67B).intermediateDim).toBe(0);
    expect(() => createCorrectedPhysicsModel({ model: parseHFConfig(OPT_67B), hardware: H100, tp: 1 })).toThrow(/intermediate_size must be > 0/);
  });

  it('prices OPT-350m weights by hand: layers, project_in/out, a 512-wide LM head and the biases', () => {
    // Per layer 4·d² attention + 2·d·ffn MLP; project_in/out 2·d·512; LM head 50272·512; biases per layer
    // 4·d (q, k, v, o) + ffn + d (fc1, fc2). fp16.
    const d = 1024;
    const params = 24 * (4 * d * d + 2 * d * 4096) + 2 * d * 512 + 50272 * 512 + 24 * (4 * d + 4096 + d);
    expect(params).toBe(328_998_912);
    const g = gradient(fam(OPT_350M), 1);
    expect(g.weight_read).toBeCloseTo((params * 2) / (3.35e6 * 0.85), 6);
  });

  it('sizes the KV cache with a two-matrix MLP instead of refusing ReLU', () => {
    const mc = fam(OPT_67B);
    const params = extractKVCapacityParams(OPT_67B, 'config.json', { families: true });
    expect(params.hiddenAct).toBe('relu');
    expect(() => calculateKVBlocks(mc, H100, params, { tp: 1, blockSize: 16, gpuMemoryUtilization: 0.9 })).toThrow(/unsupported activation "relu"/);
    const blocks = calculateKVBlocks(mc, H100, params, { tp: 1, blockSize: 16, gpuMemoryUtilization: 0.9, families: true });
    // A block is 16 tokens · 32 layers · 2 · 4096 · 2 bytes = 8 MiB; 80 GiB · 0.9 = 72 GiB less 12.4 GiB of
    // weights (6.66e9 params, two-matrix MLP, fp16) and the fixed activation/runtime reserve ≈ 53.6 GiB.
    expect(blocks).toBeGreaterThan(6800);
    expect(blocks).toBeLessThan(6900);
  });
});

describe('GPT-NeoX', () => {
  it('reads intermediate_size (default 4·hidden), GELU without gate, biases; rotary_pct and parallel residual change nothing priced', () => {
    const mc = fam(NEOX_20B);
    expect(mc).toMatchObject({ numLayers: 44, hiddenDim: 6144, numKVHeads: 64, intermediateDim: 24576, hiddenAct: 'gelu_fast', linearBias: true });
    expect(architectureOf(mc).mlpMatrices).toBe(2);
    const { intermediate_size: _drop, hidden_act: _act, ...bare } = NEOX_20B;
    expect(fam(bare)).toMatchObject({ intermediateDim: 4 * 6144, hiddenAct: 'gelu' });
    // vLLM's GPT-NeoX layer all-reduces attention and MLP outputs separately, parallel residual or not.
    const serial = gradient(fam({ ...NEOX_20B, use_parallel_residual: false, rotary_pct: 1 }), 2);
    expect(gradient(mc, 2)).toEqual(serial);
  });
});

describe('Falcon', () => {
  it('Falcon-7B: multi-query (one KV head), MLP 4·hidden, GELU without gate, one all-reduce per layer', () => {
    const mc = fam(FALCON_7B);
    expect(mc).toMatchObject({ numLayers: 32, numHeads: 71, numKVHeads: 1, intermediateDim: 4 * 4544, hiddenAct: 'gelu', linearBias: false, allReducesPerLayer: 1 });
    expect(architectureOf(mc).mlpMatrices).toBe(2);
    // The reference parser sees 71 KV heads and a gated MLP of width 0.
    expect(parseHFConfig(FALCON_7B)).toMatchObject({ numKVHeads: 71, intermediateDim: 0 });
  });

  it('Falcon-40B in its RefinedWeb form: n_layer, n_head, n_head_kv with new_decoder_architecture; ffn_hidden_size wins over 4·hidden', () => {
    expect(fam(FALCON_40B_OLD)).toMatchObject({ numLayers: 60, numHeads: 128, numKVHeads: 8, intermediateDim: 32768, allReducesPerLayer: 1 });
    expect(fam({ ...FALCON_40B_OLD, model_type: 'falcon', num_kv_heads: 8, ffn_hidden_size: 30000 })).toMatchObject({ numKVHeads: 8, intermediateDim: 30000 });
    // Without new_decoder_architecture and multi_query: one KV head per head, and two all-reduces (no parallel attention).
    expect(fam({ ...FALCON_7B, multi_query: false, parallel_attn: false })).toMatchObject({ numKVHeads: 71 });
    expect(fam({ ...FALCON_7B, multi_query: false, parallel_attn: false }).allReducesPerLayer).toBeUndefined();
  });

  it('prices one all-reduce per layer: half the TP communication of the same shapes with two', () => {
    const mc = fam(FALCON_40B_OLD);
    // Without the vocabulary: the logits all-gather (once per step, not per layer) is the same for both.
    const one = gradient({ ...mc, vocabSize: 0 }, 4).comm!;
    const two = gradient({ ...mc, vocabSize: 0, allReducesPerLayer: 2 }, 4).comm!;
    expect(one).toBeGreaterThan(0);
    expect(two / one).toBeCloseTo(2, 12);
  });
});

describe('MoE fields', () => {
  it('Mixtral: num_local_experts, num_experts_per_tok, experts as wide as intermediate_size', () => {
    const a = architectureOf(fam(MIXTRAL));
    expect(fam(MIXTRAL)).toMatchObject({ numLocalExperts: 8, numExpertsPerTok: 2 });
    expect(a).toMatchObject({ moeLayers: 32, denseLayers: 0, expertWidth: 14336, sharedWidth: 0, mlpMatrices: 3 });
  });

  it('Qwen-MoE: num_experts, moe_intermediate_size, shared_expert_intermediate_size, decoder_sparse_step, mlp_only_layers', () => {
    const mc = fam(QWEN_MOE);
    expect(mc).toMatchObject({ numLocalExperts: 60, numExpertsPerTok: 4, moeExpertFFNDim: 1408, sharedExpertFFNDim: 5632 });
    expect(architectureOf(mc)).toMatchObject({ moeLayers: 24, denseLayers: 0, expertWidth: 1408, sharedWidth: 5632 });
    // Experts every 2nd layer ((i + 1) % 2 == 0: layers 1, 3, 5, 7) except layer 1: 3 MoE layers of 8, dense ones 5632 wide.
    const sparse = fam({ ...QWEN_MOE, num_hidden_layers: 8, decoder_sparse_step: 2, mlp_only_layers: [1] });
    expect(architectureOf(sparse)).toMatchObject({ moeLayers: 3, denseLayers: 5, denseWidth: 5632 });
  });

  it('DeepSeek: n_routed_experts, n_shared_experts × moe_intermediate_size, first_k_dense_replace, moe_layer_freq', () => {
    const mc = fam(DEEPSEEK_LITE);
    expect(mc).toMatchObject({ numLocalExperts: 64, numExpertsPerTok: 6, moeExpertFFNDim: 1408, sharedExpertFFNDim: 2 * 1408, firstKDenseReplace: 1 });
    expect(architectureOf(mc)).toMatchObject({ moeLayers: 26, denseLayers: 1, denseWidth: 10944, expertWidth: 1408, sharedWidth: 2816, mla: true });
    // moe_layer_freq 2 after one dense layer: experts at layers 2, 4, 6 of 8.
    expect(architectureOf(fam({ ...DEEPSEEK_LITE, num_hidden_layers: 8, moe_layer_freq: 2 }))).toMatchObject({ moeLayers: 3, denseLayers: 5 });
  });

  it('the families option changes nothing for these shapes nor for any catalog model (corrected-physics prices them as before)', () => {
    for (const raw of [MIXTRAL, DEEPSEEK_LITE, { ...QWEN_MOE, decoder_sparse_step: 1 }]) expect(fam(raw)).toEqual(parseHFConfig(raw));
    for (const [name, entry] of Object.entries(MODEL_CATALOG)) expect(fam(entry.config), name).toEqual(parseHFConfig(entry.config));
  });
});
