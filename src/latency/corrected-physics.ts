/**
 * The corrected-physics latency model (`--latency-model corrected-physics`): one vLLM step priced from the
 * model's shapes and the GPU's physics, with the reference's known errors fixed (docs/fidelity.md lists each
 * correction and its measured effect):
 *
 * - GEMMs (projections, MLP, experts, LM head) cost max(FLOPs at the GPU class's achievable GEMM rate, weight
 *   bytes at its achievable streaming bandwidth, {@link RIDGE} × their sum): a roofline per step whose ridge costs
 *   what measured kernels do there, not the reference's fitted multiples;
 * - prefill attention is causal FLOPs over the request's real context (progress, not the full prompt) at the
 *   FlashAttention efficiency of the GPU class; decode attention reads the paged KV cache at its own
 *   efficiency;
 * - attention uses the model's explicit `head_dim` (Qwen3 and others), not hidden/heads;
 * - tensor-parallel all-reduce (two per layer) and expert-parallel all-to-all are priced on the GPU's
 *   interconnect (NVLink/NVSwitch, PCIe, inter-node), not at HBM bandwidth; at TP > 1 the vocabulary-parallel LM
 *   head's logits (sampled positions × vocab, model dtype) are all-gathered once per step as vLLM V1 does;
 * - MoE layers at DP > 1 see the tokens of every DP rank (vLLM runs the expert layers in lockstep across
 *   ranks): a rank priced alone uses the balanced-load estimate dp × local tokens; a rank of a lockstep group
 *   (instance/lockstep.ts, `lockstep` below) has its forward padded to the largest rank's count P and its MoE
 *   layers over dp × P;
 * - vLLM's software overheads are explicit: a fixed cost per step, a cost per scheduled request per step,
 *   and a per-request front-end cost (HTTP, tokenization, detokenization) before the engine sees it.
 *
 * The step time is piecewise linear and homogeneous in seven coefficients — multipliers on the compute,
 * weight-read, KV-read and communication times, and the three overheads in µs — so `blis calibrate --fit`
 * can fit them on a user's own server ({@link LinearLatency}).
 */
import { clampToInt64 } from '../domain/units.js';
import { NCCL_IN_STEP_CALL_US, type GpuPhysics, type LinkSpec } from '../config/catalog/gpu-physics.js';
import { LatencyConfigError, LatencyErrorCode, isPositiveFinite } from './errors.js';
import { isMoE } from './layers.js';
import { architectureOf } from './architecture.js';
import { kvElementBytes, type HardwareConfig, type LatencyModel, type LinearLatency, type ModelConfig, type StepBatch } from './types.js';
import type { HybridLayerCosts } from './attention-layout.js';
import { checkTpSpan, crossNodeFraction, interNodeBytesPerUs, nodesSpanned, validateNetwork, type InterNodeNetwork } from './network.js';
import { moeCommBackendOf, moeDispatchCopies } from './moe-comm.js';
import { allReduceUs, allToAllUs, logitsGatherUs, type CollectivePlan } from './collective-cost.js';

/** Coefficient names in vector order: the keys of a latency profile's `coefficients`. */
export const CORRECTED_PHYSICS_COEFFICIENTS = ['compute', 'weight_read', 'kv_read', 'comm', 'step_us', 'request_us', 'frontend_us'] as const;
export type CorrectedPhysicsCoefficient = (typeof CORRECTED_PHYSICS_COEFFICIENTS)[number];

/**
 * Defaults: the physics multipliers are 1 (the catalog's efficiencies as they are); the software overheads are
 * vLLM V1's (v0.15.1 on an H100 host) as fitted on the 12 public runs that did not overload (docs/fidelity.md;
 * `npm run fidelity` prints this in-sample fit). The fidelity report never predicts a run with them: it
 * re-fits them with that run left out.
 */
export const CORRECTED_PHYSICS_DEFAULTS: Readonly<Record<CorrectedPhysicsCoefficient, number>> = {
  compute: 1,
  weight_read: 1,
  kv_read: 1,
  comm: 1,
  step_us: 838,
  request_us: 8,
  frontend_us: 9030,
};

export interface CorrectedPhysicsOptions {
  readonly model: ModelConfig;
  readonly hardware: HardwareConfig;
  readonly tp: number;
  /** Data-parallel ranks of the deployment (each rank is its own engine; MoE layers span all ranks, in lockstep). */
  readonly dp?: number;
  /** Experts distributed whole over the tp·dp GPUs (all-to-all dispatch) instead of TP-sharded. */
  readonly expertParallel?: boolean;
  /**
   * vLLM's MoE dispatch/combine backend (`--moe-comm-backend`, default allgather_reducescatter): the all-gather
   * family moves every rank's hidden states to every rank; the all-to-all family (DeepEP, pplx, ...) sends a token
   * once to each other rank that holds one of its top-k experts.
   */
  readonly moeCommBackend?: string;
  /** Coefficients by name; missing ones take {@link CORRECTED_PHYSICS_DEFAULTS}. */
  readonly coefficients?: Partial<Record<CorrectedPhysicsCoefficient, number>>;
  /**
   * Inter-node fabric (--gpus-per-node, --inter-node-bandwidth, --inter-node-latency): a group larger than a node
   * runs its collective on the intra-node link for the share 1/n of the bytes and at this bandwidth for the
   * cross-node share (n − 1)/n, plus this latency per collective. Absent = the GPU's own interconnect entry
   * (a group larger than its gpusPerNode runs wholly on its inter-node link).
   */
  readonly network?: InterNodeNetwork;
  /** Speculative decoding's verify width K+1 (default 1 = off): a decode entry computes w positions. */
  readonly verifyWidth?: number;
  /**
   * The engine runs one attention call per step over prefills and decodes (vLLM V1, the default), so a decode in a
   * mixed step pays the GPU's query tile (GpuPhysics.mixedDecodeTileRows); false for engines that call the decode
   * kernel apart (vLLM V0: EngineProfile.unifiedAttention).
   */
  readonly unifiedAttention?: boolean;
}

/** Every per-step constant, derived once. Times in µs, rates per µs. */
interface Plan extends CollectivePlan {
  readonly L: number;
  readonly d: number;
  readonly hPerGpu: number;
  readonly headDim: number;
  /** Dense-path FLOPs per token per GPU (projections, dense MLP, shared experts) and their weight bytes. */
  readonly linFlopsPerToken: number;
  readonly linBytes: number;
  /** LM head FLOPs per sampled token per GPU (its weights are in linBytes). */
  readonly headFlopsPerSample: number;
  readonly moeLayers: number;
  readonly experts: number;
  readonly topK: number;
  /** One expert's FLOPs per routed token and its bytes, per GPU (already divided by the expert group). */
  readonly expertFlopsPerToken: number;
  readonly expertBytes: number;
  /** tp·dp for MoE at DP > 1 (every rank's tokens reach the expert layers), else tp. */
  readonly expertGroup: number;
  readonly dp: number;
  readonly kvBytesPerToken: number;
  /** Query rows a decode fills in a mixed step's attention kernel (GpuPhysics.mixedDecodeTileRows; 0 = none). */
  readonly decodeTile: number;
  readonly gemmRate: number;
  readonly attnRate: number;
  readonly weightBw: number;
  readonly kvBw: number;
  readonly actBytes: number;
  readonly tp: number;
  /** TP all-reduces per layer: 2 (after attention and after the MLP), 1 where the model sums them first (Falcon). */
  readonly allReducesPerLayer: number;
  /** Logits bytes per sampled position gathered at TP > 1 (vocab × activation bytes); 0 at TP 1. */
  readonly logitsBytesPerSample: number;
  /**
   * Per token, the hidden states one dispatch (or combine) moves, in units of d × activation bytes before the
   * collective's own (n − 1)/n: dp for the all-gather family; for the all-to-all family the expected number of
   * other ranks holding one of its top-k experts, times n/(n − 1) (moe-comm.ts, moeDispatchCopies).
   */
  readonly dispatchCopies: number;
  /** A hybrid layout (`--attention-layers config`); null = every layer full attention. */
  readonly hybrid: HybridPlan | null;
  /** Verify width of a decode entry (1 without speculative decoding). */
  readonly w: number;
}

/** Per GPU: the KV bytes and the state are divided by tp (heads sharded by TP). */
type HybridPlan = HybridLayerCosts;

function fail(code: LatencyErrorCode, field: string, message: string): never {
  throw new LatencyConfigError(code, field, `corrected-physics: ${message}`);
}

function checkFraction(v: number, field: string): void {
  if (!(Number.isFinite(v) && v > 0 && v <= 1)) fail(LatencyErrorCode.InvalidHardwareConfig, field, `${field} must be in (0, 1], got ${v}`);
}

function checkLink(l: LinkSpec, field: string): void {
  for (const [name, p] of [['small', l.small], ['large', l.large]] as const) {
    if (!isPositiveFinite(p.busBandwidthGBs)) fail(LatencyErrorCode.InvalidHardwareConfig, `${field}.${name}.busBandwidthGBs`, `must be > 0, got ${p.busBandwidthGBs}`);
    if (!(Number.isFinite(p.latencyUs) && p.latencyUs >= 0)) fail(LatencyErrorCode.InvalidHardwareConfig, `${field}.${name}.latencyUs`, `must be >= 0, got ${p.latencyUs}`);
  }
}

function makePlan(opts: CorrectedPhysicsOptions): Plan {
  const { model: mc, hardware: hw, tp } = opts;
  const dp = opts.dp ?? 1;
  const P = LatencyErrorCode.InvalidParallelism;
  const M = LatencyErrorCode.InvalidModelConfig;
  if (!Number.isInteger(tp) || tp <= 0) fail(P, 'tp', `tp must be a positive integer, got ${tp}`);
  if (!Number.isInteger(dp) || dp < 1) fail(P, 'dp', `dp must be an integer >= 1, got ${dp}`);
  const backend = moeCommBackendOf(opts.moeCommBackend, 'corrected-physics');
  if (mc.numLayers <= 0) fail(M, 'num_hidden_layers', `num_hidden_layers must be > 0, got ${mc.numLayers}`);
  if (mc.numHeads <= 0) fail(M, 'num_attention_heads', `num_attention_heads must be > 0, got ${mc.numHeads}`);
  if (mc.hiddenDim <= 0) fail(M, 'hidden_size', `hidden_size must be > 0, got ${mc.hiddenDim}`);
  if (mc.intermediateDim <= 0 && !isMoE(mc)) fail(M, 'intermediate_size', `intermediate_size must be > 0, got ${mc.intermediateDim}`);
  if (!isPositiveFinite(mc.bytesPerParam)) fail(M, 'torch_dtype', `bytes per parameter must be > 0, got ${mc.bytesPerParam}`);
  if (mc.numHeads % tp !== 0) fail(P, 'tp', `num_attention_heads (${mc.numHeads}) must be divisible by tp (${tp})`);
  if (isMoE(mc) && mc.numExpertsPerTok <= 0) fail(M, 'num_experts_per_tok', `MoE model with ${mc.numLocalExperts} experts needs num_experts_per_tok > 0`);
  if (!isPositiveFinite(hw.TFlopsPeak)) fail(LatencyErrorCode.InvalidHardwareConfig, 'TFlopsPeak', `TFlopsPeak must be > 0, got ${hw.TFlopsPeak}`);
  if (!isPositiveFinite(hw.BwPeakTBs)) fail(LatencyErrorCode.InvalidHardwareConfig, 'BwPeakTBs', `BwPeakTBs must be > 0, got ${hw.BwPeakTBs}`);
  // Never another GPU's physics: the caller resolves them (src/config/gpu-physics-derive.ts) or the model is refused.
  if (hw.physics === undefined) fail(LatencyErrorCode.InvalidHardwareConfig, 'interconnect, efficiency', 'the GPU has no interconnect/efficiency entry; give them in --hardware-config (or "class" and "NVLinkGBs"/"PCIeGen" to derive them)');
  const phys: GpuPhysics = hw.physics;
  const eff = phys.efficiency;
  checkFraction(eff.gemm, 'efficiency.gemm');
  checkFraction(eff.attention, 'efficiency.attention');
  checkFraction(eff.weightRead, 'efficiency.weightRead');
  checkFraction(eff.kvRead, 'efficiency.kvRead');
  checkLink(phys.interconnect.intraNode, 'interconnect.intraNode');
  checkLink(phys.interconnect.interNode, 'interconnect.interNode');
  const perNode = phys.interconnect.gpusPerNode;
  if (!Number.isInteger(perNode) || perNode < 1) fail(LatencyErrorCode.InvalidHardwareConfig, 'interconnect.gpusPerNode', `must be a positive integer, got ${perNode}`);

  const d = mc.hiddenDim;
  const L = mc.numLayers;
  const a = architectureOf(mc);
  const hd = a.headDim;
  const kvHeads = a.kvHeads;
  const qDim = a.qDim;
  const kvDim = kvHeads * hd;
  const wbpp = mc.weightBytesPerParam > 0 ? mc.weightBytesPerParam : mc.bytesPerParam;
  const mlpMats = a.mlpMatrices;
  const moeLayers = a.moeLayers;
  const denseLayers = a.denseLayers;
  const moe = isMoE(mc);
  const dFFMoE = a.expertWidth;
  const dFFDense = a.denseWidth;

  const attnParams = d * qDim + 2 * d * kvDim + qDim * d;
  const denseParams = mlpMats * d * dFFDense;
  const sharedParams = a.sharedWidth > 0 ? mlpMats * d * a.sharedWidth : 0;
  // OPT's word_embed_proj_dim: the LM head works at that width, with project_in/out matrices around the decoder.
  const embed = mc.embedDim !== undefined && mc.embedDim > 0 ? mc.embedDim : d;
  const projParams = embed === d ? 0 : 2 * d * embed;
  const linParams = L * attnParams + denseLayers * denseParams + moeLayers * sharedParams + projParams;
  const headParams = mc.vocabSize * embed;
  // Biases are read with the weights (their FLOPs, one add per element, are negligible).
  const biasParams = mc.linearBias === true
    ? L * (qDim + 2 * kvDim + d) + denseLayers * ((mlpMats - 1) * dFFDense + d) + moeLayers * (a.sharedWidth > 0 ? (mlpMats - 1) * a.sharedWidth + d : 0)
    : 0;
  const expertGroup = moe && dp > 1 ? tp * dp : tp;
  const expertParams = mlpMats * d * dFFMoE;
  // KV heads fewer than tp are replicated: each GPU holds at least one.
  const kvPerToken = a.mla
    ? L * a.kvElementsPerLayer * kvElementBytes(mc)
    : L * 2 * hd * Math.max(kvHeads / tp, 1) * kvElementBytes(mc);
  const peak = (wbpp === 1 && hw.TFlopsFP8 > 0 ? hw.TFlopsFP8 : hw.TFlopsPeak) * 1e6;
  const bw = hw.BwPeakTBs * 1e6;
  const net = opts.network;
  if (net !== undefined) validateNetwork(net, 'corrected-physics');
  checkTpSpan(net, tp, 'corrected-physics');
  // With a network, a spanning group's collective is split (intra-node link + inter-node share) in collectiveAt.
  const linkFor = (gpus: number): LinkSpec => (net !== undefined || gpus <= perNode ? phys.interconnect.intraNode : phys.interconnect.interNode);
  // A TP group larger than the link's custom all-reduce allows (PCIe: 2 GPUs) makes NCCL calls, whichever
  // protocol NCCL picks: each costs at least NCCL_IN_STEP_CALL_US per hop factor (issue 28).
  const tpLinkOf = (gpus: number): LinkSpec => {
    const l = linkFor(gpus);
    const max = l.customAllReduceMaxGpus;
    if (max === undefined || gpus <= max) return l;
    const floor = (p: LinkSpec['small']): LinkSpec['small'] => (p.latencyUs >= NCCL_IN_STEP_CALL_US ? p : { ...p, latencyUs: NCCL_IN_STEP_CALL_US });
    return { ...l, small: floor(l.small), large: floor(l.large) };
  };
  const tpLink = tpLinkOf(tp);
  return {
    L,
    d,
    hPerGpu: mc.numHeads / tp,
    headDim: hd,
    linFlopsPerToken: (2 * linParams) / tp,
    linBytes: ((linParams + headParams + biasParams) * wbpp) / tp,
    headFlopsPerSample: (2 * headParams) / tp,
    moeLayers: moe ? moeLayers : 0,
    experts: moe ? mc.numLocalExperts : 0,
    topK: moe ? mc.numExpertsPerTok : 0,
    expertFlopsPerToken: (2 * expertParams) / expertGroup,
    expertBytes: (expertParams * wbpp) / expertGroup,
    expertGroup,
    dp: moe ? dp : 1,
    kvBytesPerToken: kvPerToken,
    decodeTile: opts.unifiedAttention === false ? 0 : phys.mixedDecodeTileRows ?? 0,
    gemmRate: peak * eff.gemm,
    attnRate: peak * eff.attention,
    weightBw: bw * eff.weightRead,
    kvBw: bw * eff.kvRead,
    actBytes: mc.bytesPerParam,
    tp,
    allReducesPerLayer: mc.allReducesPerLayer ?? 2,
    tpLink,
    tpNcclLink: { ...tpLink, small: tpLink.large },
    logitsBytesPerSample: tp > 1 ? mc.vocabSize * mc.bytesPerParam : 0,
    epLink: linkFor(expertGroup),
    dispatchCopies: moe && dp > 1 ? moeDispatchCopies(backend, opts.expertParallel === true, mc.numLocalExperts, mc.numExpertsPerTok, expertGroup, dp) : 0,
    hybrid: mc.attention === undefined ? null : {
      full: mc.attention.full,
      sliding: mc.attention.sliding,
      linear: mc.attention.linear,
      window: mc.attention.window,
      kvPerLayer: kvPerToken / L,
      stateBytes: (mc.attention.linear * mc.attention.linearStateElements * mc.bytesPerParam) / tp,
    },
    tpCross: tp > 1 ? crossNodeFraction(nodesSpanned(net, tp)) : 0,
    epCross: expertGroup > 1 ? crossNodeFraction(nodesSpanned(net, expertGroup)) : 0,
    interBytesPerUs: net === undefined ? 1 : interNodeBytesPerUs(net),
    interLatencyUs: net === undefined ? 0 : net.latencyUs,
    w: opts.verifyWidth ?? 1,
  };
}

/**
 * A hybrid model's attention terms, written into `out`: [0] prefill attention FLOPs over all layers — full layers
 * over their causal context, sliding layers over at most the window, linear layers over the d_head state per
 * head in place of a context — and [1] the KV bytes read — the full layers' context, the sliding layers' last
 * window, each request's linear state read and written; with `tiled` (a mixed step) the decodes' part apart: [2] their
 * tiles' FLOPs and [3] their KV bytes, which {@link stepGradient} prices as one roofline.
 */
function hybridAttention(p: Plan, h: HybridPlan, batch: StepBatch, out: Float64Array, tiled: boolean): void {
  let flops = 0;
  let tile = 0;
  let kvFull = 0;
  let kvWin = 0;
  let decFull = 0;
  let decWin = 0;
  const W = h.window;
  for (let i = 0; i < batch.count; i++) {
    const t = batch.newTokens[i]!;
    const ctx = batch.progress[i]!;
    if (ctx < batch.inputLen[i]!) {
      const c = ctx + (t + 1) / 2;
      flops += 4 * p.hPerGpu * p.headDim * t * (h.full * c + h.sliding * Math.min(c, W) + h.linear * p.headDim);
      kvFull += ctx;
      kvWin += Math.min(ctx, W);
    } else {
      decFull += ctx;
      decWin += Math.min(ctx, W);
    }
  }
  if (tiled) {
    // A decode in a mixed step: one tile of query rows over its context in the full and sliding layers.
    tile = 4 * p.hPerGpu * p.headDim * p.decodeTile * (h.full * decFull + h.sliding * decWin);
  } else {
    kvFull += decFull;
    kvWin += decWin;
  }
  out[0] = flops;
  out[1] = h.kvPerLayer * (h.full * kvFull + h.sliding * kvWin) + 2 * batch.count * h.stateBytes;
  out[2] = tile;
  out[3] = tiled ? h.kvPerLayer * (h.full * decFull + h.sliding * decWin) : 0;
}

const hybridScratch = new Float64Array(4);

/**
 * GEMMs near the roofline's ridge cost more than max(compute, memory): the weights stream while the tensor cores
 * work, but neither at its full rate. Measured kernel times (vidur's A100 and H100 projections, LLMServingSim's RTX
 * PRO 6000 and RTX 4090 ones) sit about 50 % above the max where the two times are equal and 5–15 % above it two
 * to four times either side: max(compute, memory, RIDGE · (compute + memory)) follows them, and stays piecewise
 * linear in the coefficients. The kernels alone fit best at 0.84; the H100 runs the defaults are fitted on admit
 * at most 0.7 (docs/fidelity.md, "Workstation GPUs, the roofline's ridge").
 */
export const RIDGE = 0.7;

/** Adds one roofline's gradient (compute and weight-streaming times, or KV-read times with `memoryIndex` C.kv) to `g` under the coefficients `c`. */
function rooflineInto(g: Float64Array, c: readonly number[], compute: number, memory: number, memoryIndex: number = C.weight): void {
  const tc = c[C.compute]! * compute;
  const tm = c[memoryIndex]! * memory;
  const ridge = RIDGE * (tc + tm);
  if (ridge > tc && ridge > tm) {
    g[C.compute]! += RIDGE * compute;
    g[memoryIndex]! += RIDGE * memory;
  } else if (tc >= tm) g[C.compute]! += compute;
  else g[memoryIndex]! += memory;
}

/** Index of each coefficient in the vector. */
const C = { compute: 0, weight: 1, kv: 2, comm: 3, step: 4, request: 5, frontend: 6 } as const;
const K = CORRECTED_PHYSICS_COEFFICIENTS.length;

/**
 * Writes the gradient into `g` (length K) and returns the step time (µs, untruncated). `padTo` > 0 (a lockstep DP
 * rank, instance/lockstep.ts): the forward pass runs at least `padTo` tokens (vLLM pads every DP rank to the
 * largest rank's count, dp_utils.py), so the projections, the MoE layers (over dp × padTo) and their collectives
 * see the padded count; attention, KV reads, the LM head and the per-request overhead stay the rank's own. An
 * empty batch with padTo > 0 is a dummy forward pass.
 */
function stepGradient(p: Plan, c: readonly number[], batch: StepBatch, g: Float64Array, padTo = 0): number {
  g.fill(0);
  const count = batch.count;
  if (count === 0 && padTo === 0) return 0;
  const newTokens = batch.newTokens;
  const progress = batch.progress;
  const inputLen = batch.inputLen;
  let tokens = 0;
  let samples = 0;
  let attnFlops = 0;
  let kvTokens = 0;
  let prefills = 0;
  let decodeCtx = 0;
  for (let i = 0; i < count; i++) {
    const t = newTokens[i]!;
    const ctx = progress[i]!;
    const inLen = inputLen[i]!;
    tokens += t;
    if (ctx < inLen) {
      // Causal attention of t new queries over ctx cached tokens plus the chunk itself; the cached part is read.
      attnFlops += 4 * p.hPerGpu * p.headDim * t * (ctx + (t + 1) / 2);
      kvTokens += ctx;
      prefills++;
      if (ctx + t >= inLen) samples++;
    } else {
      kvTokens += ctx;
      decodeCtx += ctx;
      samples++;
      // Speculative decoding: the decode verifies w = K+1 positions, each through the projections and LM head.
      if (p.w > 1) {
        tokens += p.w - t;
        samples += p.w - 1;
      }
    }
  }
  if (tokens < padTo) tokens = padTo;
  const { L } = p;
  // Dense path: one roofline over every projection, dense MLP and the LM head.
  const linCompute = (tokens * p.linFlopsPerToken + samples * p.headFlopsPerSample) / p.gemmRate;
  const linMemory = p.linBytes / p.weightBw;
  rooflineInto(g, c, linCompute, linMemory);
  let commBytes = tokens * p.d * p.actBytes;
  let comm = p.allReducesPerLayer * L * allReduceUs(p, p.tp, commBytes);
  if (samples > 0 && p.logitsBytesPerSample > 0) comm += logitsGatherUs(p, p.tp, samples * p.logitsBytesPerSample);
  if (p.moeLayers > 0) {
    // Expected distinct experts hit by the group's tokens: N·(1 − (1 − k/N)^T).
    const groupTokens = tokens * p.dp;
    const active = p.experts * (1 - Math.pow(1 - p.topK / p.experts, groupTokens));
    const moeCompute = (p.moeLayers * groupTokens * p.topK * p.expertFlopsPerToken) / p.gemmRate;
    const moeMemory = (p.moeLayers * active * p.expertBytes) / p.weightBw;
    rooflineInto(g, c, moeCompute, moeMemory);
    if (p.dp > 1) {
      // Tokens travel to the experts and back: dispatchCopies hidden states each, per vLLM's backend (moe-comm.ts).
      commBytes = tokens * p.d * p.actBytes * p.dispatchCopies;
      comm += 2 * p.moeLayers * allToAllUs(p, p.expertGroup, commBytes);
    }
  }
  // A mixed step runs its decodes through the prefill's varlen kernel: each fills a tile of decodeTile query rows
  // per head over its context (GpuPhysics.mixedDecodeTileRows), computed while its KV streams in: the decodes'
  // tile FLOPs and KV read form one roofline, with the GEMMs' ridge (LLMServingSim's attention profiles: 0.97–1.08
  // of the measured mixed calls; docs/fidelity.md).
  const tiled = prefills > 0 && p.decodeTile > 0;
  if (p.hybrid === null) {
    g[C.compute]! += (L * attnFlops) / p.attnRate;
    if (tiled) {
      g[C.kv] = ((kvTokens - decodeCtx) * p.kvBytesPerToken) / p.kvBw;
      const tile = (L * 4 * p.hPerGpu * p.headDim * p.decodeTile * decodeCtx) / p.attnRate;
      rooflineInto(g, c, tile, (decodeCtx * p.kvBytesPerToken) / p.kvBw, C.kv);
    } else g[C.kv] = (kvTokens * p.kvBytesPerToken) / p.kvBw;
  } else {
    hybridAttention(p, p.hybrid, batch, hybridScratch, tiled);
    g[C.compute]! += hybridScratch[0]! / p.attnRate;
    g[C.kv] = hybridScratch[1]! / p.kvBw;
    if (tiled) rooflineInto(g, c, hybridScratch[2]! / p.attnRate, hybridScratch[3]! / p.kvBw, C.kv);
  }
  g[C.comm] = comm;
  g[C.step] = 1;
  g[C.request] = count;
  let t = 0;
  for (let k = 0; k < K; k++) t += c[k]! * g[k]!;
  return t;
}

export function createCorrectedPhysicsModel(opts: CorrectedPhysicsOptions): LatencyModel {
  const given = opts.coefficients ?? {};
  for (const key of Object.keys(given)) {
    if (!(CORRECTED_PHYSICS_COEFFICIENTS as readonly string[]).includes(key)) {
      fail(LatencyErrorCode.InvalidCoefficients, key, `unknown coefficient "${key}"; valid: ${CORRECTED_PHYSICS_COEFFICIENTS.join(', ')}`);
    }
  }
  const c = CORRECTED_PHYSICS_COEFFICIENTS.map((name) => given[name] ?? CORRECTED_PHYSICS_DEFAULTS[name]);
  c.forEach((v, i) => {
    const name = CORRECTED_PHYSICS_COEFFICIENTS[i]!;
    if (!Number.isFinite(v) || v < 0) fail(LatencyErrorCode.InvalidCoefficients, name, `coefficient ${name} must be a finite number >= 0, got ${v}`);
  });
  if (c[C.compute] === 0 || c[C.weight] === 0) {
    fail(LatencyErrorCode.InvalidCoefficients, c[C.compute] === 0 ? 'compute' : 'weight_read', 'the compute and weight_read multipliers must be > 0');
  }
  const plan = makePlan(opts);
  const scratch = new Float64Array(K);
  const frontend = clampToInt64(c[C.frontend]!);
  const linear: LinearLatency = {
    names: CORRECTED_PHYSICS_COEFFICIENTS,
    coefficients: c,
    stepGradient: (batch, out) => stepGradient(plan, c, batch, out),
    ...(plan.dp > 1 ? { stepGradientPadded: (batch: StepBatch, padTo: number, out: Float64Array) => stepGradient(plan, c, batch, out, padTo) } : {}),
    queueingGradient: (_req, out) => {
      out.fill(0);
      out[C.frontend] = 1;
    },
  };
  return {
    name: 'corrected-physics',
    stepTime: (batch) => (batch.count === 0 ? 1 : Math.max(1, clampToInt64(stepGradient(plan, c, batch, scratch)))),
    queueingTime: () => frontend,
    outputTokenProcessingTime: () => 0,
    postDecodeFixedOverhead: () => 0,
    linear,
    vllmPreemption: true,
    // A MoE model at DP > 1: its ranks step in lockstep (plan.dp is 1 for dense models).
    ...(plan.dp > 1
      ? {
        lockstep: {
          tokens: (batch: StepBatch) => forwardTokens(plan, batch),
          stepTime: (batch: StepBatch, padTo: number) => (batch.count === 0 && padTo === 0 ? 1 : Math.max(1, clampToInt64(stepGradient(plan, c, batch, scratch, padTo)))),
        },
      }
      : {}),
  };
}

/** Tokens of the forward pass of `batch` (stepGradient's count before padding: speculative positions included). */
function forwardTokens(p: Plan, batch: StepBatch): number {
  let tokens = 0;
  for (let i = 0; i < batch.count; i++) {
    const t = batch.newTokens[i]!;
    tokens += t;
    if (p.w > 1 && batch.progress[i]! >= batch.inputLen[i]!) tokens += p.w - t;
  }
  return tokens;
}
