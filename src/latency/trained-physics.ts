/**
 * Trained-physics latency model (reference blis-core.md §6.2), the default backend: roofline-style basis
 * functions (compute, KV traffic, weight loading, TP/MoE communication) scaled by fitted β coefficients plus
 * per-layer, per-request and per-step overheads. MFU is not used.
 *
 * Expression operand order follows the reference term by term; see roofline.ts for why that matters.
 */
import { clampToInt64 } from '../domain/units.js';
import { LatencyConfigError, LatencyErrorCode, isPositiveFinite, validateCoefficients } from './errors.js';
import { MOE_COMM_BACKENDS, moeCommBackendOf } from './moe-comm.js';
import { isMoE, layerSplit } from './layers.js';
import { architectureOf } from './architecture.js';
import { checkTpSpan, crossNodeFraction, interNodeBytesPerUs, nodesSpanned, validateNetwork, type InterNodeNetwork } from './network.js';
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
   * Inter-node fabric (--gpus-per-node, beyond the pinned reference; upstream #1530/#1537): a TP group or MoE
   * group larger than a node moves the cross-node share (n − 1)/n of its collective bytes at the inter-node
   * bandwidth, plus a fixed latency per collective. Absent = every collective inside one node (the reference).
   */
  readonly network?: InterNodeNetwork;
  /**
   * Speculative decoding's verify width K+1 (default 1 = off): a decode entry is priced as that many tokens in
   * the decode projection/MLP FLOPs and KV write traffic; its attention (one shared context read per step), the
   * weight load, communication and per-request terms are not scaled (upstream PR #1538).
   */
  readonly verifyWidth?: number;
  /**
   * Upstream's live expert-parallel step time (#1548, PR #1683), beyond the pinned reference (which ignores
   * --enable-expert-parallel in trained-physics): each GPU of the expert-parallel group tp·groupDp owns whole
   * experts, so the MoE FFN routes tokens to their owners by dispatch/combine over that group instead of
   * all-reducing a tensor-sharded output; the routed-expert weights per GPU fall to
   * num_experts/min(tp·groupDp, num_experts). Routed-expert compute keeps the tp·dp group. `groupDp` is the
   * LOGICAL --dp: a DP-placed replica runs at dp 1 but its experts are spread over all the ranks' GPUs.
   * Absent = the pinned reference's step time (EP off).
   */
  readonly expertParallel?: { readonly groupDp: number };
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
  const g = opts.expertParallel?.groupDp;
  if (g !== undefined && (!Number.isInteger(g) || g < 1)) fail(P, 'expertParallel.groupDp', `expert-parallel group dp must be an integer >= 1, got ${g}`);
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
  /** Flattened MoE group: tp·dp for MoE models (routed-expert compute). */
  readonly group: number;
  /** Expert parallelism in force (`expertParallel` given, MoE, a group wider than one GPU). */
  readonly epOn: boolean;
  /** The group the dispatch/combine runs over: the expert-parallel group with EP on, else `group`. */
  readonly dispatchGroup: number;
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
  /** A hybrid layout (`--attention-layers config`), null = every layer full attention. */
  readonly hybrid: { readonly full: number; readonly sliding: number; readonly linear: number; readonly window: number } | null;
  /** Cross-node share of the TP all-reduce bytes ((n − 1)/n over the n nodes the TP group spans; 0 in one node). */
  readonly tpCross: number;
  /** The same for the MoE dispatch/combine over the tp·dp group. */
  readonly epCross: number;
  /** Inter-node bandwidth, bytes per µs (1 when no group spans nodes: never divided by then). */
  readonly interBytesPerUs: number;
  /** Fixed cross-node latency of one step's collectives, µs (0 when no group spans nodes). */
  readonly netLatencyUs: number;
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
  const epGroup = moe && opts.expertParallel !== undefined ? tp * opts.expertParallel.groupDp : 1;
  const epOn = epGroup > 1;
  const dispatchGroup = epOn ? epGroup : group;
  // Whole experts per GPU with EP on: never fewer than one expert (upstream ClampExpertShardToExpertCount).
  const weightGroup = epOn ? Math.min(epGroup, mc.numLocalExperts) : group;
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
    ffnWeights += nMoE * (mc.numLocalExperts / weightGroup) * mats * d * dFFMoE * wbpp;
    if (shared > 0) ffnWeights += (nMoE * mats * d * shared * wbpp) / tp;
  }
  if (nDense > 0) ffnWeights += (nDense * mats * d * dFFDense * wbpp) / tp;

  const net = opts.network;
  const tpCross = tp > 1 ? crossNodeFraction(nodesSpanned(net, tp)) : 0;
  const epCross = moe && (dp > 1 || epOn) ? crossNodeFraction(nodesSpanned(net, dispatchGroup)) : 0;
  // Collectives per step that cross a node: the TP all-reduces (attention per layer, dense FFN per dense layer,
  // MoE FFN per MoE layer at DP = 1 without EP) and the dispatch + combine of each MoE layer at DP > 1 or EP on.
  let crossingCollectives = 0;
  if (tpCross > 0) crossingCollectives += L + nDense + (moe && nMoE > 0 && dp === 1 && !epOn ? nMoE : 0);
  if (epCross > 0) crossingCollectives += 2 * nMoE;

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
    epOn,
    dispatchGroup,
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
    hybrid: mc.attention === undefined ? null : { full: mc.attention.full, sliding: mc.attention.sliding, linear: mc.attention.linear, window: mc.attention.window },
    tpCross,
    epCross,
    interBytesPerUs: net !== undefined && (tpCross > 0 || epCross > 0) ? interNodeBytesPerUs(net) : 1,
    netLatencyUs: net !== undefined ? crossingCollectives * net.latencyUs : 0,
    kvBytes: mc.kvBytesPerElement ?? KV_ELEMENT_BYTES,
    w: opts.verifyWidth ?? 1,
  };
}

/**
 * `bytes` moved per GPU by a collective at HBM bandwidth (the reference's pricing) when the group is inside one
 * node; across nodes the share `cross` of them moves at the inter-node bandwidth instead.
 */
function commUs(p: Plan, bytes: number, cross: number): number {
  if (cross === 0) return bytes / p.bytesPerUs;
  return (bytes * (1 - cross)) / p.bytesPerUs + (bytes * cross) / p.interBytesPerUs;
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
  return commUs(p, units * tokens * p.d * p.actBPP * 2.0 * tpFactor, p.tpCross);
}

/**
 * One MoE layer's dispatch+combine time at DP > 1 or with expert parallelism on. The all-gather family moves each token's hidden state;
 * the all-to-all family moves it to each of its top-k experts.
 */
function dispatch(p: Plan, tokens: number): number {
  if (p.all2all) {
    const commTokens = (((tokens / p.dp) * p.kEff * (p.dispatchGroup - 1)) / p.dispatchGroup) * 2;
    return commUs(p, commTokens * p.d * p.actBPP, p.epCross);
  }
  return commUs(p, (((tokens / p.dp) * (p.dispatchGroup - 1)) / p.dispatchGroup) * 2 * p.d * p.actBPP, p.epCross);
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

  return combine(p, pf, dc, count, tPfCompute, tPfKv, tDcCompute, tDcKv);
}

/** The step time from its prefill and decode terms: weights, communication and the overheads added. */
function combine(p: Plan, pf: number, dc: number, count: number, tPfCompute: number, tPfKv: number, tDcCompute: number, tDcKv: number): number {
  const { L, dp } = p;
  const tokens = pf + dc;
  let tTpAttn = 0;
  let tTpDense = 0;
  if (p.tp > 1) {
    tTpAttn = allReduce(p, L, tokens) / dp;
    tTpDense = allReduce(p, p.nDense, tokens) / dp;
  }
  // MoE FFN communication: an all-reduce at DP = 1 with EP off, a dispatch/combine at DP > 1 or EP on, never both.
  const tMoEReduce = p.isMoE && p.nMoE > 0 && dp === 1 && p.tp > 1 && !p.epOn ? allReduce(p, p.nMoE, tokens) : 0;
  const tMoEDispatch = p.isMoE && (dp > 1 || p.epOn) ? dispatch(p, tokens) * p.nMoE : 0;

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
    b[7] * (p.interleaved ? 1.0 : 0.0) * p.nMoE +
    (tokens > 0 ? p.netLatencyUs : 0);
  return Math.max(1, clampToInt64(step));
}

export function createTrainedPhysicsModel(opts: TrainedPhysicsOptions): LatencyModel {
  const dp = opts.dp ?? 1;
  validateCoefficients('alpha', opts.alpha, 3, 'trained-physics');
  validateCoefficients('beta', opts.beta, 7, 'trained-physics');
  const backend = moeCommBackendOf(opts.moeCommBackend, 'trained-physics');
  validate(opts, dp);
  if (opts.network !== undefined) validateNetwork(opts.network, 'trained-physics');
  checkTpSpan(opts.network, opts.tp, 'trained-physics');
  const plan = makePlan(opts, dp, MOE_COMM_BACKENDS[backend] === 'all2all');
  const queueing = clampToInt64(opts.alpha[0]!);
  const postDecode = clampToInt64(opts.alpha[1]!);
  const perToken = clampToInt64(opts.alpha[2]!);
  if (plan.hybrid !== null) {
    // Sliding layers need each decode's own context (min(progress, window)), not only the sum.
    const sums = plan.hybrid.sliding === 0;
    return {
      name: 'trained-physics',
      stepTime: (batch) => hybridStepTime(plan, batch),
      ...(sums ? { stepTimeWithDecodes: (batch: StepBatch, decodes: number, decodeProgress: number) => hybridStepTime(plan, batch, decodes, decodeProgress) } : {}),
      queueingTime: () => queueing,
      outputTokenProcessingTime: () => perToken,
      postDecodeFixedOverhead: () => postDecode,
    };
  }
  return {
    name: 'trained-physics',
    stepTime: (batch) => stepTime(plan, batch),
    stepTimeWithDecodes: (batch, decodes, decodeProgress) => stepTime(plan, batch, decodes, decodeProgress),
    queueingTime: () => queueing,
    outputTokenProcessingTime: () => perToken,
    postDecodeFixedOverhead: () => postDecode,
  };
}

/**
 * {@link stepTime} of a hybrid model (upstream PRs #1644/#1650, extended to sliding windows): the attention score
 * FLOPs and the KV traffic follow each layer's kind — full layers over the context, sliding layers over at most
 * their window, linear layers over the d_head × d_head state per head in place of a context (no KV traffic: their
 * constant state is left in the per-layer overhead β4·L, as upstream does). Projections, MLPs, weights and
 * communication are those of every layer. `extraDc`/`extraCtx` as in stepTime, valid without sliding layers.
 */
function hybridStepTime(p: Plan, batch: StepBatch, extraDc = 0, extraCtx = 0): number {
  const h = p.hybrid!;
  const count = batch.count + extraDc;
  if (count === 0) return 1;
  const W = h.window;
  let pf = 0;
  let dc = extraDc;
  let sumCtx = extraCtx;
  let sumWin = 0;
  let attn = 0;
  let attnWin = 0;
  for (let i = 0; i < batch.count; i++) {
    const pi = batch.progress[i]!;
    const il = batch.inputLen[i]!;
    if (pi < il) {
      const t = batch.newTokens[i]!;
      pf += t;
      attn += 4 * p.hPerGPU * t * (il + t / 2) * p.dH;
      attnWin += 4 * p.hPerGPU * t * Math.min(il + t / 2, W) * p.dH;
    } else if (batch.outputLen[i]! > 0) {
      dc++;
      sumCtx += pi;
      sumWin += Math.min(pi, W);
    }
  }
  const { L, d, tpdp, dp, dH } = p;
  const kvLayers = h.full + h.sliding;
  let tPfCompute = 0;
  let tPfKv = 0;
  if (pf > 0) {
    const proj = (L * 2 * pf * d * p.projWidth) / tpdp;
    const linear = 4 * p.hPerGPU * pf * dH * dH;
    tPfCompute = (proj + (h.full * attn + h.sliding * attnWin + h.linear * linear) / dp + ffnFlops(p, pf)) / p.flopsPerUs;
    tPfKv = (kvLayers * p.kvW * pf * p.kvBytes) / p.bytesPerUs;
  }
  let tDcCompute = 0;
  let tDcKv = 0;
  if (dc > 0) {
    // Speculative decoding: each decode verifies w = K+1 positions (as in stepTime).
    const dcw = dc * p.w;
    const proj = (L * 2 * dcw * d * p.projWidth) / tpdp;
    const attnDc = (4 * p.hPerGPU * dH * (h.full * sumCtx + h.sliding * sumWin + h.linear * dH * dc)) / dp;
    tDcCompute = (proj + attnDc + ffnFlops(p, dcw)) / p.flopsPerUs;
    tDcKv = (p.kvW * p.kvBytes * (h.full * (sumCtx + dcw) + h.sliding * (sumWin + dcw))) / p.bytesPerUs;
  }
  return combine(p, pf, dc, count, tPfCompute, tPfKv, tDcCompute, tDcKv);
}
