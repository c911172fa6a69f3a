/**
 * One definition of a model's architecture for every latency backend and for KV capacity, used by
 * corrected-physics always and by roofline, trained-physics and capacity sizing under `--semantics corrected`
 * (docs/reference-differences.md E11, L2, L3). The reference derives these facts differently in each place:
 * roofline counts two MLP matrices while capacity counts three, trained-physics truncates d/H and nobody uses
 * `head_dim`, step time ignores `first_k_dense_replace` and MLA's compressed KV, and Llama 4's shared expert and
 * interleaving are miscounted.
 */
import { isMoE } from './layers.js';
import type { ModelConfig } from './types.js';

/** Activations whose MLP is gated (gate, up and down projections); '' = unspecified, assumed gated. */
const GATED: ReadonlySet<string> = new Set(['silu', 'swiglu', 'geglu', 'situ', 'gelu_pytorch_tanh', '']);

export interface Architecture {
  /** Attention head size: the config's `head_dim` when given, else hidden/heads (not truncated). */
  readonly headDim: number;
  /** Query width heads·head_dim (differs from hidden when head_dim is explicit, e.g. Qwen3-30B-A3B). */
  readonly qDim: number;
  readonly kvHeads: number;
  /** Layers with routed experts, and layers with a dense MLP. */
  readonly moeLayers: number;
  readonly denseLayers: number;
  /** Weight matrices per MLP (and per expert): 3 when gated, 2 otherwise. */
  readonly mlpMatrices: number;
  /** FFN width of one routed expert and of a dense layer's MLP. */
  readonly expertWidth: number;
  readonly denseWidth: number;
  /** Total shared-expert FFN width in each MoE layer (0 = none). */
  readonly sharedWidth: number;
  /** KV elements cached per token per layer over all heads: 2·kvHeads·head_dim, or MLA's latent width. */
  readonly kvElementsPerLayer: number;
  /** MLA: the latent (kv_lora_rank + qk_rope_head_dim) is replicated on every TP rank, not sharded. */
  readonly mla: boolean;
}

/**
 * Layers with routed experts: Llama 4 places one every `interleave_moe_layer_step` layers (HF's
 * `(i + 1) % step == 0`: step 1 = every layer, Scout; step 2 = every other, Maverick); DeepSeek/GLM keep the
 * first `first_k_dense_replace` layers dense.
 */
function moeLayerCount(mc: ModelConfig): number {
  if (!isMoE(mc)) return 0;
  const L = mc.numLayers;
  const dense = mc.mlpOnlyLayers ?? [];
  const freq = mc.moeLayerFreq ?? 1;
  if (dense.length > 0 || freq > 1) {
    // Qwen-MoE: experts where (i + 1) % decoder_sparse_step == 0 and i is not in mlp_only_layers; DeepSeek:
    // where i >= first_k_dense_replace and i % moe_layer_freq == 0.
    const skip = new Set(dense);
    let n = 0;
    for (let i = 0; i < L; i++) {
      const placed = mc.interleaveMoELayerStep > 0 ? (i + 1) % mc.interleaveMoELayerStep === 0 : i >= mc.firstKDenseReplace && i % freq === 0;
      if (placed && !skip.has(i)) n++;
    }
    return n;
  }
  if (mc.interleaveMoELayerStep > 0) return Math.trunc(L / mc.interleaveMoELayerStep);
  return L - Math.min(Math.max(mc.firstKDenseReplace, 0), L);
}

export function architectureOf(mc: ModelConfig): Architecture {
  const headDim = mc.headDim > 0 ? mc.headDim : mc.hiddenDim / mc.numHeads;
  const kvHeads = mc.numKVHeads === 0 ? mc.numHeads : mc.numKVHeads;
  const moeLayers = moeLayerCount(mc);
  const expertWidth = mc.moeExpertFFNDim > 0 ? mc.moeExpertFFNDim : mc.intermediateDim;
  // Llama 4 has one shared expert of the routed experts' width in every MoE layer; its config has no key for it.
  const llama4Shared = moeLayers > 0 && mc.modelType.startsWith('llama4') ? expertWidth : 0;
  const mla = mc.kvLoraRank > 0;
  return {
    headDim,
    qDim: mc.numHeads * headDim,
    kvHeads,
    moeLayers,
    denseLayers: mc.numLayers - moeLayers,
    mlpMatrices: GATED.has(mc.hiddenAct) ? 3 : 2,
    expertWidth,
    denseWidth: mc.denseIntermediateDim > 0 ? mc.denseIntermediateDim : mc.intermediateDim,
    sharedWidth: mc.sharedExpertFFNDim > 0 ? mc.sharedExpertFFNDim : llama4Shared,
    kvElementsPerLayer: mla ? mc.kvLoraRank + mc.qkRopeHeadDim : 2 * kvHeads * headDim,
    mla,
  };
}
