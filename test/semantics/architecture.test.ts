/**
 * `--semantics`: one architecture definition for roofline, trained-physics and KV capacity
 * (docs/reference-differences.md E11, L2, L3), in both modes. Expected figures are worked out here from the
 * models' config.json values, not read back from the code under test.
 */
import { describe, expect, it } from 'vitest';
import { Request } from '../../src/domain/request.js';
import { findGpu } from '../../src/config/catalog/hardware.js';
import { MODEL_CATALOG } from '../../src/config/catalog/models.js';
import { architectureOf } from '../../src/latency/architecture.js';
import { layerSplit } from '../../src/latency/layers.js';
import { extractKVCapacityParams, parseHFConfig } from '../../src/latency/hf-config.js';
import { calculateKVBlocks, modelWeightBytes } from '../../src/latency/kv-capacity.js';
import { createRooflineModel } from '../../src/latency/roofline.js';
import { createTrainedPhysicsModel } from '../../src/latency/trained-physics.js';
import { TRAINED_PHYSICS_COEFFICIENTS } from '../../src/config/defaults.js';
import { stepBatchOf, type ModelConfig } from '../../src/latency/types.js';

const model = (name: keyof typeof MODEL_CATALOG): ModelConfig => parseHFConfig(MODEL_CATALOG[name].config);
const h100 = findGpu('H100')!;

/** A request that has finished its prompt and decodes at context `ctx`. */
function decoding(ctx: number): Request {
  const r = new Request('r', new Int32Array(ctx), new Int32Array(100), 0);
  r.progressIndex = ctx;
  r.numNewTokens = 1;
  return r;
}

/** A request whose first prefill chunk of `t` tokens is scheduled. */
function prefilling(t: number): Request {
  const r = new Request('p', new Int32Array(t), new Int32Array(10), 0);
  r.numNewTokens = t;
  return r;
}

describe('the architecture definition (corrected mode)', () => {
  it('Llama 4 Scout: every one of its 48 layers has experts (interleave step 1) and a shared expert of 8192', () => {
    const mc = model('llama-4-scout-17b-16e-instruct-fp8-dynamic');
    expect(layerSplit(mc)).toEqual({ moe: 24, dense: 24 }); // the reference's L/(step+1)
    const a = architectureOf(mc);
    expect([a.moeLayers, a.denseLayers, a.sharedWidth]).toEqual([48, 0, 8192]);
  });

  it('DeepSeek-V2-Lite: first layer dense, 26 MoE layers, two shared experts of 1408, MLA latent 512+64', () => {
    const mc = model('deepseek-v2-lite');
    expect(layerSplit(mc)).toEqual({ moe: 27, dense: 0 });
    const a = architectureOf(mc);
    expect([a.moeLayers, a.denseLayers, a.sharedWidth, a.kvElementsPerLayer, a.mla]).toEqual([26, 1, 2816, 576, true]);
  });

  it('Qwen3-30B-A3B: head_dim 128 (hidden/heads is 64), so the query width is 4096, twice the hidden size', () => {
    const a = architectureOf(model('qwen3-30b-a3b'));
    expect([a.headDim, a.qDim]).toEqual([128, 4096]);
  });
});

describe('E11: roofline counts a gated MLP as three matrices and uses head_dim', () => {
  // llama-3.1-8b: d 4096, 32 layers, 8 KV heads of 128, MLP 14336, bf16. One decoding request at context 1000
  // is memory-bound: weights + KV read and written + activations, at 3.35 TB/s.
  const d = 4096;
  const L = 32;
  const dKV = 8 * 128;
  const attn = d * (d + 2 * dKV) + d * d;
  const kvPerToken = 2 * L * 8 * 128 * 2;
  const memoryUs = (mlpMatrices: number): number => {
    const weights = (attn * L + mlpMatrices * d * 14336 * L) * 2;
    return ((weights + kvPerToken * 1 + kvPerToken * 1000 + L * d * 2) / (h100.BwPeakTBs * 1e12)) * 1e6;
  };

  it('reference: two MLP matrices (5.10 B non-embedding parameters); corrected: three (6.98 B, the real count)', () => {
    const mc = model('llama-3.1-8b-instruct');
    const ref = createRooflineModel({ model: mc, hardware: h100, tp: 1, alpha: [0, 0, 0] }).stepTime(stepBatchOf([decoding(1000)]));
    const cor = createRooflineModel({ model: mc, hardware: h100, tp: 1, alpha: [0, 0, 0], corrected: true }).stepTime(stepBatchOf([decoding(1000)]));
    expect(Math.abs(ref - memoryUs(2))).toBeLessThanOrEqual(1);
    expect(Math.abs(cor - memoryUs(3))).toBeLessThanOrEqual(1);
    expect(cor / ref).toBeGreaterThan(1.3);
  });

  it('corrected roofline: MLA moves the 576-element latent per layer instead of 2 x 16 heads x 128', () => {
    const mc = model('deepseek-v2-lite');
    const at = (ctx: number, corrected: boolean): number =>
      createRooflineModel({ model: mc, hardware: h100, tp: 1, alpha: [0, 0, 0], corrected }).stepTime(stepBatchOf([decoding(ctx)]));
    // Extra KV bytes read for 100,000 more tokens of context: 27 layers x elements x 2 bytes each.
    const perToken = (elements: number): number => (27 * elements * 2) / (h100.BwPeakTBs * 1e12) * 1e6;
    expect(Math.abs(at(101000, false) - at(1000, false) - 100000 * perToken(4096))).toBeLessThanOrEqual(2);
    expect(Math.abs(at(101000, true) - at(1000, true) - 100000 * perToken(576))).toBeLessThanOrEqual(2);
  });
});

describe('E11/L3: trained-physics', () => {
  const tp = (mc: ModelConfig, corrected: boolean, r: Request): number =>
    createTrainedPhysicsModel({ model: mc, hardware: h100, tp: 1, alpha: TRAINED_PHYSICS_COEFFICIENTS.alpha, beta: TRAINED_PHYSICS_COEFFICIENTS.beta, corrected }).stepTime(stepBatchOf([r]));

  it('is unchanged for a model whose definition already agrees (llama-3.1-8b: head_dim = d/H, dense, gated)', () => {
    const mc = model('llama-3.1-8b-instruct');
    expect(tp(mc, true, prefilling(2048))).toBe(tp(mc, false, prefilling(2048)));
    expect(tp(mc, true, decoding(3000))).toBe(tp(mc, false, decoding(3000)));
  });

  it('uses head_dim where it differs (Qwen3-30B-A3B): prefill attention and projections cost more', () => {
    const mc = model('qwen3-30b-a3b');
    expect(tp(mc, true, prefilling(2048))).toBeGreaterThan(tp(mc, false, prefilling(2048)));
  });

  it('MLA: decode KV traffic of DeepSeek-V2-Lite grows by the latent per token, far less than in the reference', () => {
    const mc = model('deepseek-v2-lite');
    const growth = (corrected: boolean): number => tp(mc, corrected, decoding(101000)) - tp(mc, corrected, decoding(1000));
    expect(growth(true)).toBeLessThan(growth(false) / 3);
  });
});

describe('L2/L3: capacity sizing under the same definition', () => {
  it('Llama 4 Scout: the shared expert (48 layers x 3 x 5120 x 8192, FP8) is counted, so fewer KV blocks', () => {
    const cfg = MODEL_CATALOG['llama-4-scout-17b-16e-instruct-fp8-dynamic'].config;
    const mc = parseHFConfig(cfg);
    const mcw = { ...mc, weightBytesPerParam: 1 };
    const params = extractKVCapacityParams(cfg);
    const diff = modelWeightBytes(mcw, params, true) - modelWeightBytes(mcw, params, false);
    // Dense layers: the reference counts intermediate_size_mlp MLPs in none of them (first_k_dense_replace 0);
    // the only difference is the shared experts.
    expect(diff).toBe(48 * 3 * 5120 * 8192);
    const blocks = (corrected: boolean): number => calculateKVBlocks(mcw, findGpu('H200')!, params, { tp: 1, blockSize: 16, gpuMemoryUtilization: 0.9, corrected });
    expect(blocks(true)).toBeLessThan(blocks(false));
  });

  it('shared experts sized from ffn_hidden_size when intermediate_size is absent (the step-time rule)', () => {
    const cfg = {
      num_hidden_layers: 4, hidden_size: 1024, num_attention_heads: 8, num_key_value_heads: 8, vocab_size: 1000,
      torch_dtype: 'bfloat16', hidden_act: 'silu', ffn_hidden_size: 2048, num_local_experts: 4, num_experts_per_tok: 2,
      moe_intermediate_size: 0, n_shared_experts: 1,
    };
    const mc = parseHFConfig(cfg);
    const params = extractKVCapacityParams(cfg);
    expect(params.sharedExpertFFNDim).toBe(0); // the reference's capacity path: intermediate_size only
    expect(mc.sharedExpertFFNDim).toBe(2048); // its step-time path: ffn_hidden_size too
    const diff = modelWeightBytes(mc, params, true) - modelWeightBytes(mc, params, false);
    expect(diff).toBe(4 * 3 * 1024 * 2048 * 2);
  });
});
