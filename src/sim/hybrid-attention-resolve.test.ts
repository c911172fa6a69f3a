/**
 * `--attention-layers` end to end (issue 30 feature 5): a hybrid config.json gets more KV blocks and faster
 * long-context decodes than the same model read with every layer full attention; the default follows the
 * latency model and semantics; a bad value is one error naming the option.
 */
import { describe, expect, it } from 'vitest';
import { parseSimulationConfig, simulate } from './simulate.js';
import { resolveEngineFlags } from './resolve-engine.js';

/** Qwen3-Next's attention (12 full of 48 layers), dense. */
const QWEN3_NEXT = {
  model_type: 'qwen3_next', hidden_act: 'silu', hidden_size: 2048, intermediate_size: 5120, num_attention_heads: 16, num_key_value_heads: 2,
  head_dim: 256, num_hidden_layers: 48, torch_dtype: 'bfloat16', vocab_size: 151936, max_position_embeddings: 65536, full_attention_interval: 4,
  linear_num_value_heads: 32, linear_num_key_heads: 16, linear_key_head_dim: 128, linear_value_head_dim: 128, linear_conv_kernel_dim: 4,
};
/** gpt-oss-like: sliding-window (128 tokens) and full layers alternating, MoE. */
const OSS = {
  model_type: 'gpt_oss', hidden_act: 'silu', hidden_size: 2880, intermediate_size: 2880, num_attention_heads: 64, num_key_value_heads: 8, head_dim: 64,
  num_hidden_layers: 24, torch_dtype: 'bfloat16', vocab_size: 201088, num_local_experts: 32, num_experts_per_tok: 4, sliding_window: 128,
  max_position_embeddings: 131072, layer_types: Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? 'sliding_attention' : 'full_attention')),
};
const files = { 'q/config.json': JSON.stringify(QWEN3_NEXT), 'oss/config.json': JSON.stringify(OSS) };
const base = { mode: 'run', model: 'qwen/qwen3-next-like', hardware: 'H100', tp: 1, modelConfigFolder: 'q' } as const;

async function blocks(options: Record<string, unknown>): Promise<number> {
  const { values } = parseSimulationConfig({ ...base, ...options });
  const r = await resolveEngineFlags(values, { readText: (p) => (files as Record<string, string>)[p] ?? '', warn: () => {} });
  return r.setup.kv.totalBlocks;
}

describe('--attention-layers', () => {
  it('config sizes the KV cache over the 12 full-attention layers: more blocks than full; the default per backend', async () => {
    const full = await blocks({ attentionLayers: 'full' });
    const hybrid = await blocks({ attentionLayers: 'config' });
    expect(hybrid).toBeGreaterThan(3 * full);
    expect(await blocks({})).toBe(full); // trained-physics, reference semantics: the reference's reading
    expect(await blocks({ semantics: 'corrected' })).toBeGreaterThan(3 * full);
    expect(await blocks({ latencyModel: 'corrected-physics' })).toBeGreaterThan(await blocks({ latencyModel: 'corrected-physics', attentionLayers: 'full' }));
  });

  it.each(['trained-physics', 'roofline', 'corrected-physics'] as const)('%s: long-context decodes are faster with config than full', async (latencyModel) => {
    const run = async (attentionLayers: 'full' | 'config'): Promise<number> => {
      const r = await simulate({ ...base, latencyModel, attentionLayers, numRequests: 6, rate: 0.5, promptTokens: 30000, promptTokensStdev: 0, promptTokensMax: 30000, outputTokens: 50, outputTokensStdev: 0, files });
      return r.metrics.itl_mean_ms;
    };
    expect(await run('config')).toBeLessThan(await run('full'));
  });

  it('a sliding-window model (gpt-oss-like, trained-physics): about twice the blocks, faster long-context decodes', async () => {
    const full = await blocks({ modelConfigFolder: 'oss', attentionLayers: 'full' });
    const hybrid = await blocks({ modelConfigFolder: 'oss', attentionLayers: 'config' });
    expect(hybrid).toBeGreaterThan(1.9 * full);
    expect(hybrid).toBeLessThan(2 * full);
    const itl = async (attentionLayers: 'full' | 'config'): Promise<number> =>
      (await simulate({ ...base, modelConfigFolder: 'oss', attentionLayers, numRequests: 6, rate: 0.5, promptTokens: 20000, promptTokensStdev: 0, promptTokensMax: 20000, outputTokens: 50, outputTokensStdev: 0, files })).metrics.itl_mean_ms;
    expect(await itl('config')).toBeLessThan(await itl('full'));
  });

  it('refuses an unknown value naming the option (the CLI: test/cli/attention-layers.test.ts)', async () => {
    await expect(simulate({ ...base, attentionLayers: 'hybrid' as never, files })).rejects.toThrow(/attentionLayers/);
  });
});
