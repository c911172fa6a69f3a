/**
 * Roofline latency model (reference blis-core.md §6.1): per-step time is the larger of compute time
 * (FLOPs at peak·MFU) and memory time (bytes at peak bandwidth), with weights loaded once per step.
 *
 * Every float expression keeps the reference's operand order so that the truncated tick count is identical:
 * IEEE arithmetic is not associative, and a one-ulp difference can move a step across an integer boundary.
 */
import type { Request } from '../domain/request.js';
import { clampToInt64 } from '../domain/units.js';
import { LatencyConfigError, LatencyErrorCode, isPositiveFinite, validateCoefficients } from './errors.js';
import { goPow } from '../gocompat/go-math.js';
import { layerSplit } from './layers.js';
import { architectureOf } from './architecture.js';
import { kvElementBytes, type HardwareConfig, type LatencyModel, type ModelConfig, type StepBatch } from './types.js';
import type { HybridLayerCosts } from './attention-layout.js';
import { checkTpSpan, crossNodeFraction, interNodeBytesPerUs, nodesSpanned, validateNetwork, type InterNodeNetwork } from './network.js';

export interface RooflineOptions {
  readonly model: ModelConfig;
  readonly hardware: HardwareConfig;
  /** Tensor parallelism; every FLOP and byte is divided by it (roofline has no communication term). */
  readonly tp: number;
  /** [α0, α1, α2]: queueing = α0 + α1·inputLen, per-output-token overhead = α2. The CLI passes zeros. */
  readonly alpha: readonly number[];
  /**
   * --semantics corrected (E11, L3): the model as src/latency/architecture.ts defines it — gated MLPs count
   * three matrices, `head_dim` sets the attention and projection widths, shared experts, `first_k_dense_replace`,
   * Llama 4 interleaving and MLA's compressed KV are counted.
   */
  readonly corrected?: boolean;
  /**
   * Inter-node fabric (beyond the reference and upstream, #1663): a TP group spanning n nodes adds, after the
   * roofline, the cross-node share (n − 1)/n of its two ring all-reduces per layer at the inter-node bandwidth
   * plus the inter-node latency per all-reduce (not overlapped with compute). Absent or within one node:
   * no communication term, as in the reference.
   */
  readonly network?: InterNodeNetwork;
  /**
   * Speculative decoding's verify width K+1 (default 1 = off): a decode entry is priced as w new tokens in the
   * per-request FLOPs and KV bytes (its attention over the context scales with w, as upstream PR #1538 does); the
   * weight load is not scaled.
   */
  readonly verifyWidth?: number;
}

/** Architecture constants shared by the FLOP and byte formulas, derived once at construction. */
export interface RooflineShape {
  readonly d: number;
  /** Query width: d in the reference, heads·head_dim when corrected. */
  readonly qDim: number;
  readonly L: number;
  readonly H: number;
  readonly kvH: number;
  readonly dHead: number;
  readonly dKV: number;
  readonly moeLayers: number;
  readonly denseLayers: number;
  readonly dFFMoE: number;
  readonly dFFDense: number;
  readonly topK: number;
  readonly experts: number;
  readonly bpp: number;
  readonly wbpp: number;
  /** Matrices per MLP and per expert. */
  readonly mlp: number;
  /** Total shared-expert width per MoE layer (0 in the reference, which does not count them here). */
  readonly shared: number;
  /** KV bytes written or read per token (all layers, before the division by tp). */
  readonly kvPerToken: number;
  /** A hybrid layout (`--attention-layers config`); absent = every layer full attention. */
  readonly hybrid?: HybridShape;
}

/** The attention of a hybrid model by layer kind, before the division by tp (src/latency/attention-layout.ts). */
export type HybridShape = HybridLayerCosts;

function hybridOf(mc: ModelConfig, kvPerLayer: number): { hybrid?: HybridShape } {
  const a = mc.attention;
  if (a === undefined) return {};
  const stateBytes = a.linear * a.linearStateElements * mc.bytesPerParam;
  return { hybrid: { full: a.full, sliding: a.sliding, linear: a.linear, window: a.window, kvPerLayer, stateBytes } };
}

/** The MLP counts two matrices here (capacity counts three); the reference calibrated it that way. */
const MLP_MATRICES = 2;

function correctedShapeOf(mc: ModelConfig): RooflineShape {
  const a = architectureOf(mc);
  const d = mc.hiddenDim;
  return {
    d,
    qDim: a.qDim,
    L: mc.numLayers,
    H: mc.numHeads,
    kvH: a.kvHeads,
    dHead: a.headDim,
    dKV: a.kvHeads * a.headDim,
    moeLayers: a.moeLayers,
    denseLayers: a.denseLayers,
    dFFMoE: a.expertWidth,
    dFFDense: a.denseWidth,
    topK: mc.numExpertsPerTok,
    experts: mc.numLocalExperts,
    bpp: mc.bytesPerParam,
    wbpp: mc.weightBytesPerParam > 0 ? mc.weightBytesPerParam : mc.bytesPerParam,
    mlp: a.mlpMatrices,
    shared: a.moeLayers > 0 ? a.sharedWidth : 0,
    kvPerToken: mc.numLayers * a.kvElementsPerLayer * kvElementBytes(mc),
    ...hybridOf(mc, a.kvElementsPerLayer * kvElementBytes(mc)),
  };
}

function shapeOf(mc: ModelConfig): RooflineShape {
  const d = mc.hiddenDim;
  const L = mc.numLayers;
  const H = mc.numHeads;
  const kvH = mc.numKVHeads === 0 ? H : mc.numKVHeads;
  const dHead = d / H;
  const dFF = mc.intermediateDim > 0 ? mc.intermediateDim : 4.0 * d;
  const { moe: moeLayers, dense: denseLayers } = layerSplit(mc);
  return {
    d,
    qDim: d,
    L,
    H,
    kvH,
    dHead,
    dKV: kvH * dHead,
    moeLayers,
    denseLayers,
    dFFMoE: mc.moeExpertFFNDim > 0 ? mc.moeExpertFFNDim : dFF,
    dFFDense: mc.denseIntermediateDim > 0 ? mc.denseIntermediateDim : dFF,
    topK: mc.numExpertsPerTok,
    experts: mc.numLocalExperts,
    bpp: mc.bytesPerParam,
    wbpp: mc.weightBytesPerParam > 0 ? mc.weightBytesPerParam : mc.bytesPerParam,
    mlp: MLP_MATRICES,
    shared: 0,
    kvPerToken: 2 * L * kvH * dHead * kvElementBytes(mc),
    ...hybridOf(mc, 2 * kvH * dHead * kvElementBytes(mc)),
  };
}

/** Attention + MLP FLOPs of `t` new tokens whose context already holds `seq` tokens. */
export function transformerFlops(s: RooflineShape, seq: number, t: number): number {
  const qkv = 2 * t * (s.d * s.qDim + 2 * s.d * s.dKV);
  const proj = 2 * t * s.qDim * s.d;
  let gemm = (qkv + proj) * s.L;
  const ctx = t > 1 ? seq + (t - 1) / 2.0 : seq;
  let sram: number;
  const h = s.hybrid;
  if (h === undefined) {
    const attnGemm = 4 * s.H * t * ctx * s.dHead;
    const vector = 5 * s.H * t * ctx + 2 * t * s.d;
    gemm += attnGemm * s.L;
    sram = vector * s.L;
  } else {
    // Context summed over the layers: a sliding layer attends to at most its window, a linear layer reads its
    // d_head × d_head state per head in place of a context (upstream PR #1650's convention); MLP-only layers none.
    const layerCtx = h.full * ctx + h.sliding * Math.min(ctx, h.window) + h.linear * s.dHead;
    gemm += 4 * s.H * t * layerCtx * s.dHead;
    sram = 5 * s.H * t * layerCtx + 2 * t * s.d * (h.full + h.sliding + h.linear);
  }
  if (s.moeLayers > 0) {
    gemm += 2 * t * (s.mlp * s.d * s.dFFMoE) * s.topK * s.moeLayers;
    if (s.shared > 0) gemm += 2 * t * (s.mlp * s.d * s.shared) * s.moeLayers;
  }
  if (s.denseLayers > 0) {
    gemm += 2 * t * (s.mlp * s.d * s.dFFDense) * s.denseLayers;
  }
  return gemm + sram;
}

/** Weight bytes touched by a step of `t` new tokens; MoE loads only the experts expected to be routed to. */
export function weightBytes(s: RooflineShape, t: number): number {
  const attnPerLayer = s.d * (s.qDim + 2 * s.dKV) + s.qDim * s.d;
  let moe = 0;
  if (s.moeLayers > 0) {
    const perLayer = s.mlp * s.d * s.dFFMoE;
    const n = s.experts;
    const nEff = n * (1.0 - goPow((n - s.topK) / n, t));
    moe = perLayer * nEff * s.moeLayers;
    if (s.shared > 0) moe += s.mlp * s.d * s.shared * s.moeLayers;
  }
  let dense = 0;
  if (s.denseLayers > 0) {
    dense = s.mlp * s.d * s.dFFDense * s.denseLayers;
  }
  return (attnPerLayer * s.L + (moe + dense)) * s.wbpp;
}

/** Bytes a request moves besides weights: KV written for `t` tokens, KV read for `seq`, activations. */
function dynamicBytes(s: RooflineShape, seq: number, t: number): number {
  const h = s.hybrid;
  if (h !== undefined) {
    // KV written on the attention layers, read over each one's reach; a linear layer's state read and written once.
    const kv = h.kvPerLayer * ((h.full + h.sliding) * t + h.full * seq + h.sliding * Math.min(seq, h.window));
    return kv + 2 * h.stateBytes + s.L * s.d * s.bpp * t;
  }
  const w = weightBytes(s, t);
  const total = w + s.kvPerToken * t + s.kvPerToken * seq + s.L * s.d * s.bpp * t;
  return total - w;
}

/** Reference ValidateRooflineConfig: collects every problem, reports them together, names the first. */
export function validateRooflineConfig(mc: ModelConfig, hw: HardwareConfig): void {
  const problems: Array<{ field: string; msg: string; code: LatencyErrorCode }> = [];
  const model = (ok: boolean, field: string, msg: string): void => {
    if (!ok) problems.push({ field, msg, code: LatencyErrorCode.InvalidModelConfig });
  };
  const gpu = (ok: boolean, field: string, msg: string): void => {
    if (!ok) problems.push({ field, msg, code: LatencyErrorCode.InvalidHardwareConfig });
  };
  model(mc.numHeads > 0, 'num_attention_heads', `num_attention_heads must be > 0, got ${mc.numHeads}`);
  model(mc.numLayers > 0, 'num_hidden_layers', `num_hidden_layers must be > 0, got ${mc.numLayers}`);
  model(mc.hiddenDim > 0, 'hidden_size', `hidden_size must be > 0, got ${mc.hiddenDim}`);
  model(
    isPositiveFinite(mc.bytesPerParam),
    'torch_dtype',
    `bytes per parameter must be > 0, got ${mc.bytesPerParam} (set torch_dtype to float32, float16, bfloat16, ...)`,
  );
  gpu(isPositiveFinite(hw.TFlopsPeak), 'TFlopsPeak', `TFlopsPeak must be > 0, got ${hw.TFlopsPeak}`);
  gpu(isPositiveFinite(hw.BwPeakTBs), 'BwPeakTBs', `BwPeakTBs must be > 0, got ${hw.BwPeakTBs}`);
  gpu(isPositiveFinite(hw.mfuPrefill), 'mfuPrefill', `mfuPrefill must be > 0, got ${hw.mfuPrefill}`);
  gpu(isPositiveFinite(hw.mfuDecode), 'mfuDecode', `mfuDecode must be > 0, got ${hw.mfuDecode}`);
  model(mc.numLocalExperts >= 0, 'num_local_experts', `expert count must be >= 0, got ${mc.numLocalExperts}`);
  model(
    !(mc.numLocalExperts > 1 && mc.numExpertsPerTok <= 0),
    'num_experts_per_tok',
    `MoE model with ${mc.numLocalExperts} experts needs num_experts_per_tok > 0`,
  );
  model(
    !(mc.numExpertsPerTok > mc.numLocalExperts && mc.numLocalExperts > 1),
    'num_experts_per_tok',
    `num_experts_per_tok (${mc.numExpertsPerTok}) cannot exceed the expert count (${mc.numLocalExperts})`,
  );
  model(
    !(mc.numLocalExperts === 0 && mc.numExpertsPerTok > 0),
    'num_experts_per_tok',
    `num_experts_per_tok=${mc.numExpertsPerTok} but the model has no experts`,
  );
  model(mc.moeExpertFFNDim >= 0, 'moe_intermediate_size', `moe_intermediate_size must be >= 0`);
  model(mc.sharedExpertFFNDim >= 0, 'shared_expert_intermediate_size', `shared expert FFN dim must be >= 0`);
  gpu(hw.MemoryGiB === 0 || isPositiveFinite(hw.MemoryGiB), 'MemoryGiB', `MemoryGiB must be > 0 when set`);
  gpu(hw.TFlopsFP8 === 0 || isPositiveFinite(hw.TFlopsFP8), 'TFlopsFP8', `TFlopsFP8 must be > 0 when set`);
  model(
    mc.weightBytesPerParam === 0 || isPositiveFinite(mc.weightBytesPerParam),
    'quantization_config',
    `weight bytes per parameter must be > 0 when set, got ${mc.weightBytesPerParam}`,
  );
  const first = problems[0];
  if (first !== undefined) {
    throw new LatencyConfigError(
      first.code,
      first.field,
      `roofline: invalid configuration: ${problems.map((p) => p.msg).join('; ')}`,
    );
  }
}

export function createRooflineModel(opts: RooflineOptions): LatencyModel {
  const { model, hardware, tp } = opts;
  validateCoefficients('alpha', opts.alpha, 3, 'roofline');
  if (!Number.isInteger(tp) || tp <= 0) {
    throw new LatencyConfigError(LatencyErrorCode.InvalidParallelism, 'tp', `roofline: tp must be a positive integer, got ${tp}`);
  }
  validateRooflineConfig(model, hardware);
  const net = opts.network;
  if (net !== undefined) validateNetwork(net, 'roofline');
  checkTpSpan(net, tp, 'roofline');
  const s = opts.corrected === true ? correctedShapeOf(model) : shapeOf(model);
  // Cross-node all-reduce cost per token (µs) and per step (µs), 0 when the TP group is inside one node.
  const cross = tp > 1 && net !== undefined ? crossNodeFraction(nodesSpanned(net, tp)) : 0;
  const crossUsPerToken = cross > 0 && net !== undefined
    ? (2 * s.L * s.d * s.bpp * ((2 * (tp - 1)) / tp) * cross) / interNodeBytesPerUs(net)
    : 0;
  const crossUsPerStep = cross > 0 && net !== undefined ? 2 * s.L * net.latencyUs : 0;
  const peakFlops = s.wbpp === 1.0 && hardware.TFlopsFP8 > 0 ? hardware.TFlopsFP8 * 1e12 : hardware.TFlopsPeak * 1e12;
  const peakBW = hardware.BwPeakTBs * 1e12;
  const prefillRate = peakFlops * hardware.mfuPrefill;
  const decodeRate = peakFlops * hardware.mfuDecode;
  const [a0, a1, a2] = [opts.alpha[0] ?? 0, opts.alpha[1] ?? 0, opts.alpha[2] ?? 0];
  const otp = clampToInt64(a2);
  const w = opts.verifyWidth ?? 1;

  return {
    name: 'roofline',
    stepTime(b: StepBatch): number {
      let compute = 0;
      let dynamic = 0;
      let tokens = 0;
      let requests = 0;
      // Prefill requests first, then decode requests: the reference sums the two groups in that order.
      for (let i = 0; i < b.count; i++) {
        const pi = b.progress[i]!;
        if (pi < b.inputLen[i]!) {
          const t = b.newTokens[i]!;
          compute += transformerFlops(s, pi, t) / tp / prefillRate;
          dynamic += dynamicBytes(s, pi, t) / tp;
          tokens += t;
          requests++;
        }
      }
      for (let i = 0; i < b.count; i++) {
        const pi = b.progress[i]!;
        if (pi >= b.inputLen[i]! && b.outputLen[i]! > 0) {
          compute += transformerFlops(s, pi, w) / tp / decodeRate;
          dynamic += dynamicBytes(s, pi, w) / tp;
          tokens += 1;
          requests++;
        }
      }
      if (requests === 0) return 1;
      const memory = (weightBytes(s, tokens) / tp + dynamic) / peakBW;
      if (cross > 0) return Math.max(1, clampToInt64(Math.max(compute, memory) * 1e6 + tokens * crossUsPerToken + crossUsPerStep));
      return Math.max(1, clampToInt64(Math.max(compute, memory) * 1e6));
    },
    queueingTime(req: Request): number {
      return clampToInt64(a0 + a1 * req.inputLen);
    },
    outputTokenProcessingTime(): number {
      return otp;
    },
    postDecodeFixedOverhead(): number {
      return 0;
    },
  };
}
