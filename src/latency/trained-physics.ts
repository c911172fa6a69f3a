/**
 * Trained-physics latency model (reference blis-core.md §6.2), the default backend: roofline-style basis
 * functions (compute, KV traffic, weight loading, TP/MoE communication) scaled by fitted β coefficients plus
 * per-layer, per-request and per-step overheads. MFU is not used.
 *
 * Expression operand order follows the reference term by term; see roofline.ts for why that matters.
 */
import { clampToInt64 } from '../domain/units.js';
import { LatencyConfigError, LatencyErrorCode, isPositiveFinite, validateCoefficients } from './errors.js';
import { DEFAULT_MOE_COMM_BACKEND, MOE_COMM_BACKEND_NAMES, MOE_COMM_BACKENDS, isMoECommBackend } from './moe-comm.js';
import { isMoE, layerSplit } from './layers.js';
import { architectureOf } from './architecture.js';
import type { HardwareConfig, LatencyModel, ModelConfig, StepBatch } from './types.js';

export interface TrainedPhysicsOptions {
  readonly model: ModelConfig;
  readonly hardware: HardwareConfig;
  readonly tp: number;
  /** Data parallelism (default 1). Values > 1 are only meaningful, and only allowed, for MoE models. */
  readonly dp?: number;
  /** vLLM all-to-all backend name; '' or absent = allgather_reducescatter. Only matters for MoE at dp > 1. */
  readonly moeCommBackend?: string;
  /** [α0 queueing, α1 post-decode, α2 per-output-token], at least 3 entries. */
  readonly alpha: readonly number[];
  /**
   * 7 to 11 entries. With >= 9 the prefill term splits into compute and KV parts (β0, β8); with >= 10 the
   * decode term does too (β1, β9). β10 (MoE dispatch) defaults to β3 when fewer than 11 are given.
   */
  readonly beta: readonly number[];
  /**
   * --semantics corrected (E11, L3): the model as src/latency/architecture.ts defines it — `head_dim` (not the
   * truncated d/H) for attention and projections, MLP matrices by activation, shared experts (Llama 4's too),
   * `first_k_dense_replace`, Llama 4 interleaving and MLA's compressed KV traffic.
   */
  readonly corrected?: boolean;
  /**
   * Speculative decoding's verify width K+1 (default 1 = off): a decode entry is priced as that many tokens in
   * the decode projection/MLP FLOPs and KV write traffic; its attention (one shared context read per step), the
   * weight load, communication and per-request terms are not scaled (upstream PR #1538).
   */
  readonly verifyWidth?: number;
}

/** KV cache elements are 16-bit whatever the weight precision (unless --kv-cache-dtype sets them). */
const KV_ELEMENT_BYTES = 2.0;

function fail(code: LatencyErrorCode, field: string, message: string): never {
  throw new LatencyConfigError(code, field, `trained-physics: ${message}`);
}

function validate(opts: TrainedPhysicsOptions, dp: number): void {
  const { model: mc, hardware: hw, tp } = opts;
  const M = LatencyErrorCode.InvalidModelConfig;
  const P = LatencyErrorCode.InvalidParallelism;
  const G = LatencyErrorCode.InvalidHardwareConfig;
  if (!Number.isInteger(tp) || tp <= 0) fail(P, 'tp', `tp must be a positive integer, got ${tp}`);
  if (!Number.isInteger(dp) || dp < 1) fail(P, 'dp', `dp must be an integer >= 1, got ${dp}`);
  if (dp > 1 && !isMoE(mc)) {
    fail(P, 'dp', `dp > 1 is only supported for MoE models (got dp=${dp}); model dense data parallelism as more instances`);
  }
  if (mc.numLayers <= 0) fail(M, 'num_hidden_layers', `num_hidden_layers must be > 0, got ${mc.numLayers}`);
  if (mc.numHeads <= 0) fail(M, 'num_attention_heads', `num_attention_heads must be > 0, got ${mc.numHeads}`);
  if (mc.hiddenDim <= 0) fail(M, 'hidden_size', `hidden_size must be > 0, got ${mc.hiddenDim}`);
  if (mc.intermediateDim <= 0) fail(M, 'intermediate_size', `intermediate_size must be > 0, got ${mc.intermediateDim}`);
  if (mc.numHeads % tp !== 0) {
    fail(P, 'tp', `num_attention_heads (${mc.numHeads}) must be divisible by tp (${tp}); choose a tp that divides it`);
  }
  const kvHeads = mc.numKVHeads === 0 ? mc.numHeads : mc.numKVHeads;
  if (kvHeads % tp !== 0) {
    fail(P, 'tp', `num_key_value_heads (${kvHeads}) must be divisible by tp (${tp}); choose a tp that divides it`);
  }
  if (!isPositiveFinite(hw.TFlopsPeak)) fail(G, 'TFlopsPeak', `TFlopsPeak must be > 0, got ${hw.TFlopsPeak}`);
  if (!isPositiveFinite(hw.BwPeakTBs)) fail(G, 'BwPeakTBs', `BwPeakTBs must be > 0, got ${hw.BwPeakTBs}`);
  if (!isPositiveFinite(mc.bytesPerParam)) {
    fail(M, 'torch_dtype', `bytes per parameter must be > 0, got ${mc.bytesPerParam} (set torch_dtype, e.g. bfloat16)`);
  }
  if (mc.numLocalExperts > 1 && mc.numExpertsPerTok <= 0) {
    fail(M, 'num_experts_per_tok', `MoE model with ${mc.numLocalExperts} experts needs num_experts_per_tok > 0`);
  }
}

/** Everything StepTime needs, fixed at construction. Names follow the reference formula (blis-core.md §6.2). */
interface Plan {
  readonly L: number;
  readonly d: number;
  readonly dKV: number;
  /** KV elements moved per token per layer and GPU: 2·dKV/(tp·dp), or MLA's replicated latent / dp. */
  readonly kvW: number;
  /** FLOPs per token per FFN width unit: 2 × matrices (6 in the reference). */
  readonly mlpFlops: number;
  /** Head dimension as the integer d/H (not head_dim), as in the reference. */
  readonly dH: number;
  readonly hPerGPU: number;
  readonly kEff: number;
  readonly tp: number;
  readonly dp: number;
  readonly tpdp: number;
  readonly isMoE: boolean;
  readonly nMoE: number;
  readonly nDense: number;
  /** Flattened MoE group: tp·dp for MoE models. */
  readonly group: number;
  readonly dFFMoE: number;
  readonly dFFDense: number;
  readonly shared: number;
  readonly actBPP: number;
  readonly flopsPerUs: number;
  readonly bytesPerUs: number;
  readonly all2all: boolean;
  readonly projWidth: number;
  /** Weight-loading time: batch-independent, since each GPU holds a fixed share of the experts. */
  readonly tWeight: number;
  /** β padded to 11 entries. */
  readonly beta: readonly number[];
  readonly prefillSplit: boolean;
  readonly decodeSplit: boolean;
  readonly interleaved: boolean;
  /** KV bytes per element: 2, or --kv-cache-dtype's. */
  readonly kvBytes: number;
  /** Verify width of a decode entry (1 without speculative decoding). */
  readonly w: number;
}

function makePlan(opts: TrainedPhysicsOptions, dp: number, all2all: boolean): Plan {
  const { model: mc, hardware: hw, tp } = opts;
  const given = opts.beta.length;
  const beta = Array.from({ length: 11 }, (_, i) => (i < given ? opts.beta[i]! : 0));
  if (given < 11) beta[10] = beta[3]!;

  const corrected = opts.corrected === true;
  const a = corrected ? architectureOf(mc) : null;
  const moe = isMoE(mc);
  const { moe: nMoE, dense: nDense } = a === null ? layerSplit(mc) : { moe: a.moeLayers, dense: a.denseLayers };
  const dH = a === null ? Math.trunc(mc.hiddenDim / mc.numHeads) : a.headDim;
  const kvHeads = mc.numKVHeads === 0 ? mc.numHeads : mc.numKVHeads;
  const d = mc.hiddenDim;
  const L = mc.numLayers;
  const dKV = kvHeads * dH;
  const group = moe ? tp * dp : tp;
  const dFFMoE = a === null ? (mc.moeExpertFFNDim > 0 ? mc.moeExpertFFNDim : mc.intermediateDim) : a.expertWidth;
  const dFFDense = a === null ? (mc.denseIntermediateDim > 0 ? mc.denseIntermediateDim : mc.intermediateDim) : a.denseWidth;
  const shared = a === null ? mc.sharedExpertFFNDim : a.sharedWidth;
  const mats = a === null ? 3 : a.mlpMatrices;
  const wbpp = mc.weightBytesPerParam > 0 ? mc.weightBytesPerParam : mc.bytesPerParam;
  const bytesPerUs = hw.BwPeakTBs * 1e6;
  const projWidth = a === null ? 2 * d + 2 * dKV : 2 * a.qDim + 2 * dKV;
  const kvW = a === null || !a.mla ? 2 * (dKV / (tp * dp)) : a.kvElementsPerLayer / dp;

  const attnWeights = (L * d * projWidth * wbpp) / tp;
  let ffnWeights = 0;
  if (nMoE > 0) {
    ffnWeights += nMoE * (mc.numLocalExperts / group) * mats * d * dFFMoE * wbpp;
    if (shared > 0) ffnWeights += (nMoE * mats * d * shared * wbpp) / tp;
  }
  if (nDense > 0) ffnWeights += (nDense * mats * d * dFFDense * wbpp) / tp;

  return {
    L,
    d,
    dKV,
    kvW,
    mlpFlops: 2 * mats,
    dH,
    hPerGPU: mc.numHeads / tp,
    kEff: Math.max(1, mc.numExpertsPerTok),
    tp,
    dp,
    tpdp: tp * dp,
    isMoE: moe,
    nMoE,
    nDense,
    group,
    dFFMoE,
    dFFDense,
    shared,
    actBPP: mc.bytesPerParam,
    flopsPerUs: wbpp === 1.0 && hw.TFlopsFP8 > 0 ? hw.TFlopsFP8 * 1e6 : hw.TFlopsPeak * 1e6,
    bytesPerUs,
    all2all,
    projWidth,
    tWeight: (attnWeights + ffnWeights) / bytesPerUs,
    beta,
    prefillSplit: given >= 9,
    decodeSplit: given >= 10,
    interleaved: mc.interleaveMoELayerStep > 0 && moe,
    kvBytes: mc.kvBytesPerElement ?? KV_ELEMENT_BYTES,
    w: opts.verifyWidth ?? 1,
  };
}

/** FFN FLOPs of `tokens`: routed experts spread evenly over the MoE group; shared and dense MLPs over tp·dp. */
function ffnFlops(p: Plan, tokens: number): number {
  let f = 0;
  if (p.nMoE > 0) {
    f += p.nMoE * ((tokens * p.kEff) / p.group) * p.mlpFlops * p.d * p.dFFMoE;
    f += p.shared === 0 ? 0 : (p.nMoE * tokens * p.mlpFlops * p.d * p.shared) / p.tpdp;
  }
  if (p.nDense > 0) f += (p.nDense * tokens * p.mlpFlops * p.d * p.dFFDense) / p.tpdp;
  return f;
}

/** Ring all-reduce of `tokens` hidden states over the TP group, `units` times per step; 0 without TP. */
function allReduce(p: Plan, units: number, tokens: number): number {
  if (p.tp <= 1) return 0;
  const tpFactor = (p.tp - 1) / p.tp;
  return (units * tokens * p.d * p.actBPP * 2.0 * tpFactor) / p.bytesPerUs;
}

/**
 * One MoE layer's dispatch+combine time at DP > 1. The all-gather family moves each token's hidden state;
 * the all-to-all family moves it to each of its top-k experts.
 */
function dispatch(p: Plan, tokens: number): number {
  if (p.all2all) {
    const commTokens = (((tokens / p.dp) * p.kEff * (p.group - 1)) / p.group) * 2;
    return (commTokens * p.d * p.actBPP) / p.bytesPerUs;
  }
  return ((((tokens / p.dp) * (p.group - 1)) / p.group) * 2 * p.d * p.actBPP) / p.bytesPerUs;
}

/**
 * `extraDc` decodes not listed in `batch`, with progress summing to `extraCtx`: the decode terms use only their
 * count and that sum (integers, exact in any order), so the result is that of the full list.
 */
function stepTime(p: Plan, batch: StepBatch, extraDc = 0, extraCtx = 0): number {
  const count = batch.count + extraDc;
  if (count === 0) return 1;
  let pf = 0;
  let dc = extraDc;
  let sumCtx = extraCtx;
  let attn = 0;
  const progress = batch.progress;
  const inputLen = batch.inputLen;
  for (let i = 0; i < batch.count; i++) {
    const pi = progress[i]!;
    const il = inputLen[i]!;
    if (pi < il) {
      const t = batch.newTokens[i]!;
      pf += t;
      // Prefill attention spans the whole prompt plus half the chunk, whatever the progress.
      attn += 4 * p.hPerGPU * t * (il + t / 2) * p.dH;
    } else if (batch.outputLen[i]! > 0) {
      dc++;
      sumCtx += pi;
    }
  }
  const { L, d, tpdp, dp } = p;

  let tPfCompute = 0;
  let tPfKv = 0;
  if (pf > 0) {
    const proj = (L * 2 * pf * d * p.projWidth) / tpdp;
    tPfCompute = (proj + (L * attn) / dp + ffnFlops(p, pf)) / p.flopsPerUs;
    // L·kvW = L·2·(dKV/tpdp) in the reference: doubling is exact, so the product rounds the same.
    tPfKv = (L * p.kvW * pf * p.kvBytes) / p.bytesPerUs;
  }
  let tDcCompute = 0;
  let tDcKv = 0;
  if (dc > 0) {
    // Speculative decoding: each decode verifies w = K+1 positions (dcw = dc exactly when w = 1).
    const dcw = dc * p.w;
    const proj = (L * 2 * dcw * d * p.projWidth) / tpdp;
    const attnDc = (L * 4 * p.hPerGPU * sumCtx * p.dH) / dp;
    tDcCompute = (proj + attnDc + ffnFlops(p, dcw)) / p.flopsPerUs;
    tDcKv = (L * p.kvW * p.kvBytes * (sumCtx + dcw)) / p.bytesPerUs;
  }

  const tokens = pf + dc;
  let tTpAttn = 0;
  let tTpDense = 0;
  if (p.tp > 1) {
    tTpAttn = allReduce(p, L, tokens) / dp;
    tTpDense = allReduce(p, p.nDense, tokens) / dp;
  }
  // MoE FFN communication: an all-reduce at DP = 1, a dispatch/combine at DP > 1, never both.
  const tMoEReduce = p.isMoE && p.nMoE > 0 && dp === 1 && p.tp > 1 ? allReduce(p, p.nMoE, tokens) : 0;
  const tMoEDispatch = p.isMoE && dp > 1 ? dispatch(p, tokens) * p.nMoE : 0;

  const b = p.beta as readonly [number, number, number, number, number, number, number, number, number, number, number];
  const prefill = p.prefillSplit ? b[0] * tPfCompute + b[8] * tPfKv : b[0] * Math.max(tPfCompute, tPfKv);
  const decode = p.decodeSplit ? b[1] * tDcCompute + b[9] * tDcKv : b[1] * Math.max(tDcCompute, tDcKv);
  const step =
    prefill +
    decode +
    b[2] * p.tWeight +
    b[3] * (tTpAttn + tTpDense + tMoEReduce) +
    b[10] * tMoEDispatch +
    b[4] * L +
    b[5] * count +
    b[6] +
    b[7] * (p.interleaved ? 1.0 : 0.0) * p.nMoE;
  return Math.max(1, clampToInt64(step));
}

export function createTrainedPhysicsModel(opts: TrainedPhysicsOptions): LatencyModel {
  const dp = opts.dp ?? 1;
  validateCoefficients('alpha', opts.alpha, 3, 'trained-physics');
  validateCoefficients('beta', opts.beta, 7, 'trained-physics');
  const named = opts.moeCommBackend ?? '';
  const backend = named === '' ? DEFAULT_MOE_COMM_BACKEND : named;
  if (!isMoECommBackend(backend)) {
    fail(
      LatencyErrorCode.UnknownMoECommBackend,
      'moeCommBackend',
      `unknown MoE comm backend "${backend}"; valid: ${MOE_COMM_BACKEND_NAMES.join(', ')}`,
    );
  }
  validate(opts, dp);
  const plan = makePlan(opts, dp, MOE_COMM_BACKENDS[backend] === 'all2all');
  const queueing = clampToInt64(opts.alpha[0]!);
  const postDecode = clampToInt64(opts.alpha[1]!);
  const perToken = clampToInt64(opts.alpha[2]!);
  return {
    name: 'trained-physics',
    stepTime: (batch) => stepTime(plan, batch),
    stepTimeWithDecodes: (batch, decodes, decodeProgress) => stepTime(plan, batch, decodes, decodeProgress),
    queueingTime: () => queueing,
    outputTokenProcessingTime: () => perToken,
    postDecodeFixedOverhead: () => postDecode,
  };
}
