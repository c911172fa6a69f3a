/**
 * Hybrid attention (`--attention-layers config`, issue 30 feature 5; upstream PRs #1644, #1650, #1639): layouts
 * read from small config.json fixtures written here after the public Qwen3-Next, Gemma 2/3, Kimi Linear, Jamba,
 * Nemotron-H and Qwen2 configs (trimmed to the keys that matter), checked against hand calculations.
 */
import { describe, expect, it } from 'vitest';
import { GPU_CATALOG } from '../config/catalog/hardware.js';
import { GPU_PHYSICS } from '../config/catalog/gpu-physics.js';
import { LatencyConfigError } from './errors.js';
import { extractKVCapacityParams, parseHFConfig } from './hf-config.js';
import { calculateKVBlocks, hybridReservedBytes, kvBytesPerToken } from './kv-capacity.js';
import { createRooflineModel, transformerFlops, type RooflineShape } from './roofline.js';
import { createTrainedPhysicsModel } from './trained-physics.js';
import { CORRECTED_PHYSICS_COEFFICIENTS, createCorrectedPhysicsModel } from './corrected-physics.js';
import type { ModelConfig, StepBatch } from './types.js';

/** Qwen3-Next-80B-A3B's attention, dense and 48 layers: full attention every 4th layer, Gated DeltaNet between. */
const QWEN3_NEXT = {
  model_type: 'qwen3_next', hidden_act: 'silu', hidden_size: 2048, intermediate_size: 5120, num_attention_heads: 16, num_key_value_heads: 2,
  head_dim: 256, num_hidden_layers: 48, torch_dtype: 'bfloat16', vocab_size: 151936, full_attention_interval: 4,
  linear_num_value_heads: 32, linear_num_key_heads: 16, linear_key_head_dim: 128, linear_value_head_dim: 128, linear_conv_kernel_dim: 4,
};
/** Gemma-3-like: 5 sliding-window layers to 1 full, 12 layers, window 512. */
const GEMMA3 = {
  model_type: 'gemma3_text', hidden_act: 'gelu_pytorch_tanh', hidden_size: 1152, intermediate_size: 6912, num_attention_heads: 4, num_key_value_heads: 4,
  head_dim: 128, num_hidden_layers: 12, torch_dtype: 'bfloat16', vocab_size: 262144, sliding_window: 512, sliding_window_pattern: 6,
};
const KIMI_LINEAR = {
  model_type: 'kimi_linear', hidden_size: 2304, intermediate_size: 9216, num_attention_heads: 32, num_key_value_heads: 32, num_hidden_layers: 27,
  torch_dtype: 'bfloat16', vocab_size: 163840, kv_lora_rank: 512, qk_rope_head_dim: 64,
  num_experts: 256, num_experts_per_token: 8, num_shared_experts: 1, moe_intermediate_size: 1024,
  linear_attn_config: { full_attn_layers: [4, 8, 12, 16, 20, 24, 27], kda_layers: [1, 2, 3, 5], num_heads: 32, head_dim: 128, short_conv_kernel_size: 4 },
};
const JAMBA = {
  model_type: 'jamba', hidden_size: 4096, intermediate_size: 14336, num_attention_heads: 32, num_key_value_heads: 8, num_hidden_layers: 32,
  torch_dtype: 'bfloat16', vocab_size: 65536, attn_layer_period: 8, attn_layer_offset: 4, mamba_d_state: 16, mamba_d_conv: 4, mamba_expand: 2,
};
const NEMOTRON_H = {
  model_type: 'nemotron_h', hidden_size: 1024, intermediate_size: 4096, num_attention_heads: 8, num_key_value_heads: 2, head_dim: 128,
  num_hidden_layers: 6, torch_dtype: 'bfloat16', vocab_size: 1000, hybrid_override_pattern: 'M-M*-M',
  mamba_num_heads: 16, mamba_head_dim: 64, ssm_state_size: 128, n_groups: 2, conv_kernel: 4,
};

const cfg = (raw: unknown): ModelConfig => parseHFConfig(raw, 'config.json', { attentionLayers: true });

function errorOf(f: () => unknown): LatencyConfigError {
  try {
    f();
  } catch (e) {
    if (e instanceof LatencyConfigError) return e;
    throw e;
  }
  throw new Error('expected a LatencyConfigError');
}

describe('layouts read from config.json', () => {
  it('Qwen3-Next: full_attention_interval 4 makes a quarter of the layers full attention', () => {
    const a = cfg(QWEN3_NEXT).attention!;
    expect(a).toMatchObject({ full: 12, sliding: 0, linear: 36, none: 0, source: 'full_attention_interval' });
    // Gated DeltaNet: 32 value heads × 128 × 128 state, plus (4 − 1) conv inputs of q, k (16 heads × 128) and v (32 × 128).
    expect(a.linearStateElements).toBe(32 * 128 * 128 + 3 * (2 * 16 * 128 + 32 * 128)); // 548864
  });

  it('Gemma 3: sliding_window_pattern 6 (or the same layer_types) is 10 sliding and 2 full of 12; Gemma 2 alternates', () => {
    expect(cfg(GEMMA3).attention).toMatchObject({ full: 2, sliding: 10, linear: 0, window: 512 });
    const types = Array.from({ length: 12 }, (_, i) => ((i + 1) % 6 === 0 ? 'full_attention' : 'sliding_attention'));
    const { sliding_window_pattern: _p, ...rest } = GEMMA3;
    expect(cfg({ ...rest, layer_types: types }).attention).toMatchObject({ full: 2, sliding: 10, window: 512, source: 'layer_types' });
    expect(cfg({ ...rest, model_type: 'gemma2', num_hidden_layers: 26, sliding_window: 4096 }).attention).toMatchObject({ full: 13, sliding: 13, window: 4096 });
  });

  it('Kimi Linear: the full_attn_layers are full (MLA), the rest KDA with a head_dim² state per head; its MoE key spellings (#1639)', () => {
    const mc = cfg(KIMI_LINEAR);
    expect(mc.attention).toMatchObject({ full: 7, linear: 20, linearStateElements: 32 * 128 * 128 + 3 * 3 * 32 * 128 });
    expect(mc).toMatchObject({ numLocalExperts: 256, numExpertsPerTok: 8, sharedExpertFFNDim: 1024 });
    // The aliases are read by the reference parser too (without --attention-layers config).
    expect(parseHFConfig(KIMI_LINEAR)).toMatchObject({ numExpertsPerTok: 8, sharedExpertFFNDim: 1024 });
    expect(parseHFConfig(KIMI_LINEAR).attention).toBeUndefined();
  });

  it('a config with only the K3 spelling of the active-expert count and no total is refused for capacity naming it', () => {
    const { num_experts: _n, num_shared_experts: _s, ...noTotal } = KIMI_LINEAR;
    expect(errorOf(() => extractKVCapacityParams(noTotal))).toMatchObject({ code: 'MOE_EXPERT_COUNT_MISSING', field: 'num_experts_per_token' });
  });

  it('Jamba (attn_layer_period/offset) and Nemotron-H (hybrid_override_pattern) with their Mamba states', () => {
    // Layers 4, 12, 20, 28 are attention; Mamba-1 state: d_inner = 2·4096, × d_state 16, + 3 conv inputs.
    expect(cfg(JAMBA).attention).toMatchObject({ full: 4, linear: 28, linearStateElements: 8192 * 16 + 3 * 8192 });
    // M-M*-M: 3 Mamba-2, 1 attention, 2 MLP-only; state 16·64·128 + 3·(16·64 + 2·2·128).
    expect(cfg(NEMOTRON_H).attention).toMatchObject({ full: 1, linear: 3, none: 2, linearStateElements: 16 * 64 * 128 + 3 * (1024 + 512) });
    const blocks = ['mamba', 'mlp', 'mamba', 'attention', 'mlp', 'mamba'];
    const { hybrid_override_pattern: _h, ...rest } = NEMOTRON_H;
    expect(cfg({ ...rest, layers_block_type: blocks }).attention).toMatchObject({ full: 1, linear: 3, none: 2, source: 'layers_block_type' });
  });

  it('Qwen2 reads its window only with use_sliding_window: true (from max_window_layers on); Mistral 7B on every layer', () => {
    const qwen = { model_type: 'qwen2', hidden_size: 3584, num_attention_heads: 28, num_key_value_heads: 4, num_hidden_layers: 28, intermediate_size: 18944, torch_dtype: 'bfloat16', vocab_size: 152064, sliding_window: 4096, max_window_layers: 20 };
    expect(cfg({ ...qwen, use_sliding_window: false }).attention).toBeUndefined();
    expect(cfg(qwen).attention).toBeUndefined();
    expect(cfg({ ...qwen, use_sliding_window: true }).attention).toMatchObject({ full: 20, sliding: 8, window: 4096 });
    expect(cfg({ ...qwen, model_type: 'mistral', sliding_window: null }).attention).toBeUndefined();
    expect(cfg({ ...qwen, model_type: 'mistral' }).attention).toMatchObject({ full: 0, sliding: 28, window: 4096 });
  });

  it('no layout when off, without the fields, or when every layer is full attention', () => {
    expect(parseHFConfig(QWEN3_NEXT).attention).toBeUndefined();
    const { full_attention_interval: _f, ...dense } = QWEN3_NEXT;
    expect(cfg(dense).attention).toBeUndefined();
    expect(cfg({ ...dense, layer_types: Array<string>(48).fill('full_attention') }).attention).toBeUndefined();
  });

  it('refuses a malformed layout naming the field', () => {
    expect(errorOf(() => cfg({ ...QWEN3_NEXT, layer_types: ['full_attention'] })).field).toBe('layer_types');
    expect(errorOf(() => cfg({ ...QWEN3_NEXT, layer_types: [...Array<string>(47).fill('full_attention'), 'global_thing'] }))).toMatchObject({ field: 'layer_types[47]' });
    expect(errorOf(() => cfg({ ...QWEN3_NEXT, full_attention_interval: 0 })).message).toMatch(/"full_attention_interval" must be a whole number >= 1, got 0/);
    const { sliding_window: _w, ...noWindow } = GEMMA3;
    expect(errorOf(() => cfg({ ...noWindow, layer_types: Array<string>(12).fill('sliding_attention').fill('full_attention', 11) })).field).toBe('sliding_window');
    expect(errorOf(() => cfg({ ...KIMI_LINEAR, linear_attn_config: { kda_layers: [1] } })).field).toBe('linear_attn_config.full_attn_layers');
    expect(errorOf(() => cfg({ ...JAMBA, attn_layer_offset: 8 })).field).toBe('attn_layer_offset');
    expect(errorOf(() => cfg({ ...NEMOTRON_H, hybrid_override_pattern: 'MMMMMM' })).message).toMatch(/no attention layer/);
  });
});

describe('KV capacity over the KV-bearing layers', () => {
  it('Qwen3-Next: KV bytes per token are a quarter of all-full (12 of 48 layers)', () => {
    // 12 layers × K and V × head_dim 256 × 2 KV heads × 2 bytes = 24576 (all 48 layers: 98304).
    expect(kvBytesPerToken(cfg(QWEN3_NEXT), 1)).toBe(12 * 2 * 256 * 2 * 2);
    expect(kvBytesPerToken(parseHFConfig(QWEN3_NEXT), 1)).toBe(48 * 2 * 256 * 2 * 2);
    // TP 2 shards the two KV heads.
    expect(kvBytesPerToken(cfg(QWEN3_NEXT), 2)).toBe(12 * 2 * 256 * 2 * 2 / 2);
  });

  it('Gemma 3 (5:1): the pool counts the 2 full layers; the 10 sliding ones hold a window per request', () => {
    const mc = cfg(GEMMA3);
    // 2 layers × 2 × 128 × 4 heads × 2 bytes.
    expect(kvBytesPerToken(mc, 1)).toBe(4096);
    // 8 requests × 512 tokens × 10 layers × 2048 bytes per token and layer.
    expect(hybridReservedBytes(mc, 1, false, 8, 1e12)).toBe(8 * 512 * 10 * 2048);
    // Capped at the sliding layers' per-token share: 10 of 12 budgeted layers.
    expect(hybridReservedBytes(mc, 1, false, 8, 1e6)).toBeCloseTo((1e6 * 10) / 12, 6);
  });

  it('linear layers reserve one state per request (Qwen3-Next: 36 layers × 548864 elements × 2 bytes)', () => {
    expect(hybridReservedBytes(cfg(QWEN3_NEXT), 1, false, 10, 1e12)).toBe(10 * 36 * 548864 * 2);
    expect(hybridReservedBytes(cfg(QWEN3_NEXT), 1, false, 10, 1e8)).toBe((1e8 * 36) / 48);
  });

  it('a hybrid model gets more blocks than all-full, and never fewer (the caps)', () => {
    const params = extractKVCapacityParams(QWEN3_NEXT);
    const opts = { tp: 1, blockSize: 16, gpuMemoryUtilization: 0.9 };
    const full = calculateKVBlocks(parseHFConfig(QWEN3_NEXT), GPU_CATALOG.H100, params, opts);
    const hybrid = calculateKVBlocks(cfg(QWEN3_NEXT), GPU_CATALOG.H100, params, opts);
    expect(hybrid).toBeGreaterThan(3 * full);
    expect(hybrid).toBeLessThan(4 * full + 4);
    // With a huge batch budget the reservation hits its cap: exactly the all-full count, or one block more.
    const capped = calculateKVBlocks(cfg(QWEN3_NEXT), GPU_CATALOG.H100, params, { ...opts, maxNumSeqs: 1_000_000 });
    expect(capped - full).toBeGreaterThanOrEqual(0);
    expect(capped - full).toBeLessThanOrEqual(1);
    expect(errorOf(() => calculateKVBlocks(cfg(QWEN3_NEXT), GPU_CATALOG.H100, params, { ...opts, maxNumSeqs: 0 })).field).toBe('maxNumSeqs');
  });
});

describe('attention cost by layer kind', () => {
  // The roofline hand calculation of roofline.test.ts (d 8, 2 heads of 4, dense MLP of 16), three layers.
  const base: RooflineShape = {
    d: 8, qDim: 8, L: 3, H: 2, kvH: 2, dHead: 4, dKV: 8, moeLayers: 0, denseLayers: 3,
    dFFMoE: 16, dFFDense: 16, topK: 0, experts: 0, bpp: 2, wbpp: 2, mlp: 2, shared: 0, kvPerToken: 96,
  };
  const hybrid = (full: number, sliding: number, linear: number, window = 3): RooflineShape =>
    ({ ...base, hybrid: { full, sliding, linear, window, kvPerLayer: 32, stateBytes: 0 } });

  it('a decode over 5 tokens on one full, one sliding (window 3) and one linear layer', () => {
    // projections 3 × (2·(64 + 2·64) + 2·64) = 1536; MLP 3 × 2·(2·8·16) = 1536; context over the layers
    // 5 + min(5, 3) + d_head 4 = 12: scores 4·2·1·12·4 = 384, vector 5·2·12 + 2·8·3 = 168.
    expect(transformerFlops(hybrid(1, 1, 1), 5, 1)).toBe(1536 + 1536 + 384 + 168);
  });

  it('a linear layer costs the same at any context; a sliding one stops growing at its window', () => {
    const grow = (s: RooflineShape): number => transformerFlops(s, 100, 1) - transformerFlops(s, 10, 1);
    // 90 more tokens on one full layer: 4·2·90·4 + 5·2·90 = 3780; all three layers full: 3 × 3780.
    expect(grow(hybrid(1, 0, 2))).toBe(3780);
    expect(grow(hybrid(3, 0, 0))).toBe(3 * 3780);
    expect(grow(base)).toBe(3 * 3780);
    expect(grow(hybrid(0, 0, 3))).toBe(0);
    expect(grow(hybrid(0, 3, 0, 8))).toBe(0);
  });

  const decodeAt = (ctx: number): StepBatch => ({ count: 1, progress: Int32Array.of(ctx), newTokens: Int32Array.of(1), inputLen: Int32Array.of(100), outputLen: Int32Array.of(10) });
  const H100 = { ...GPU_CATALOG.H100, physics: GPU_PHYSICS.H100! };

  it('trained-physics (as upstream #1650): the KV read of a decode grows on the full layers only', () => {
    // Ten βs split the decode term; only β9 (decode KV) is set: tDcKv = layers · 2·dKV · 2 bytes · (ctx + 1) / BW.
    const beta = [0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    const step = (mc: ModelConfig, ctx: number): number => createTrainedPhysicsModel({ model: mc, hardware: GPU_CATALOG.H100, tp: 1, alpha: [0, 0, 0], beta }).stepTime(decodeAt(ctx));
    const us = (layers: number, ctx: number): number => Math.trunc((layers * 512 * 2 * (ctx + 1)) / (GPU_CATALOG.H100.BwPeakTBs * 1e6));
    // dKV = 2 heads × d/H = 2 × 128 = 256 in the reference's reading (hidden/heads, not head_dim).
    expect(step(parseHFConfig(QWEN3_NEXT), 1_000_000)).toBe(us(48, 1_000_000));
    expect(step(cfg(QWEN3_NEXT), 1_000_000)).toBe(us(12, 1_000_000));
  });

  it('corrected-physics: the KV read counts full layers over the context, linear layers a state per request', () => {
    const g = (mc: ModelConfig, ctx: number): number => {
      const out = new Float64Array(CORRECTED_PHYSICS_COEFFICIENTS.length);
      createCorrectedPhysicsModel({ model: mc, hardware: H100, tp: 1 }).linear!.stepGradient(decodeAt(ctx), out);
      return out[2]! * H100.BwPeakTBs * 1e6 * H100.physics.efficiency.kvRead; // KV bytes
    };
    // Full layers: 12 × 2 × 256 × 2 heads × 2 bytes per token; linear: 36 × 548864 × 2 bytes read and written.
    expect(g(cfg(QWEN3_NEXT), 1000)).toBeCloseTo(1000 * 24576 + 2 * 36 * 548864 * 2, 3);
    expect(g(parseHFConfig(QWEN3_NEXT), 1000)).toBeCloseTo(1000 * 98304, 3);
  });

  it('roofline: long-context decode is cheaper hybrid than all-full', () => {
    const step = (mc: ModelConfig): number => createRooflineModel({ model: mc, hardware: GPU_CATALOG.H100, tp: 1, alpha: [0, 0, 0] }).stepTime(decodeAt(100_000));
    // Weights (the same for both) stay: 1261 µs against 2338 µs.
    expect(step(cfg(QWEN3_NEXT))).toBeLessThan(0.6 * step(parseHFConfig(QWEN3_NEXT)));
    expect(step(cfg(GEMMA3))).toBeLessThan(0.6 * step(parseHFConfig(GEMMA3)));
  });
});
