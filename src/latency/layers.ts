/** Layer arithmetic shared by the latency models: whether a model is MoE, and the per-layer counts they price. */
import type { ModelConfig } from './types.js';

/** A model counts as MoE from two experts up; one expert is dense-equivalent. */
export function isMoE(mc: ModelConfig): boolean {
  return mc.numLocalExperts >= 2;
}

/**
 * How many layers carry routed experts and how many a dense MLP, for the step-time models: every layer for
 * a uniform MoE, one in `step + 1` for an interleaved one (Llama 4 style), none for a dense model.
 * (first_k_dense_replace only affects capacity sizing, as in the reference.)
 */
export function layerSplit(mc: ModelConfig): { readonly moe: number; readonly dense: number } {
  if (!isMoE(mc)) return { moe: 0, dense: mc.numLayers };
  if (mc.interleaveMoELayerStep > 0) {
    const moe = Math.trunc(mc.numLayers / (mc.interleaveMoELayerStep + 1));
    return { moe, dense: mc.numLayers - moe };
  }
  return { moe: mc.numLayers, dense: 0 };
}
