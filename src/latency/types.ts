/**
 * Latency-model contract (reference blis-core.md §6) and the model/hardware facts the models consume.
 */
import type { Request } from '../domain/request.js';
import type { GpuPhysics } from '../config/catalog/gpu-physics.js';
import type { UserGpuPhysics } from '../config/gpu-physics-derive.js';

/**
 * The requests scheduled in a step (those with new tokens, in batch order) as parallel arrays, entries
 * [0, count): each one's progress before the step, its new tokens, prompt length and output length. The
 * engine keeps a running batch's per-step fields in arrays like these rather than on the Request objects.
 */
export interface StepBatch {
  readonly count: number;
  readonly progress: Int32Array;
  readonly newTokens: Int32Array;
  readonly inputLen: Int32Array;
  readonly outputLen: Int32Array;
}

/** The StepBatch of `requests[0..count)` (their progressIndex and numNewTokens), for callers holding Requests. */
export function stepBatchOf(requests: readonly Request[], count: number = requests.length): StepBatch {
  const n = Math.min(count, requests.length);
  const b = { count: n, progress: new Int32Array(n), newTokens: new Int32Array(n), inputLen: new Int32Array(n), outputLen: new Int32Array(n) };
  for (let i = 0; i < n; i++) {
    const r = requests[i] as Request;
    b.progress[i] = r.progressIndex;
    b.newTokens[i] = r.numNewTokens;
    b.inputLen[i] = r.inputLen;
    b.outputLen[i] = r.outputLen;
  }
  return b;
}

export type StepTimeWithDecodes = (batch: StepBatch, decodes: number, decodeProgress: number) => number;

export interface LatencyModel {
  /** Name used in output and errors, e.g. `trained-physics`. */
  readonly name: string;
  /** Step duration in ticks for the requests scheduled this step. Integer, at least 1. */
  stepTime(batch: StepBatch): number;
  /**
   * Optional: {@link stepTime} of `batch` plus `decodes` more decode entries (one new token each, progress at or
   * past the input length, output length > 0) whose progress values sum to `decodeProgress` — bit for bit what
   * stepTime returns for the whole batch, whatever the entries' order. The step loop prices steady decodes this
   * way without listing them (running-batch.ts); a model without it always gets the full list.
   */
  readonly stepTimeWithDecodes?: StepTimeWithDecodes;
  /** Delay between arrival and enqueue (alpha queueing overhead), integer ticks. */
  queueingTime(req: Request): number;
  /** Per-output-token processing overhead added to TTFT and every ITL (alpha2), integer ticks. */
  outputTokenProcessingTime(): number;
  /** Fixed overhead added once to E2E after the last token (trained-physics alpha1), integer ticks. */
  postDecodeFixedOverhead(): number;
  /** Present on models whose step time is linear in named coefficients (what `blis calibrate --fit` fits). */
  readonly linear?: LinearLatency;
  /**
   * True for a model of a real vLLM engine (corrected-physics): its instances then preempt as vLLM does, a
   * victim later re-prefilling its prompt and produced outputs in one chunked prefill (reference-differences
   * E13), under either semantics. Absent: the reference's step formation (unless --semantics corrected).
   */
  readonly vllmPreemption?: boolean;
  /**
   * Present on models that price the data-parallel ranks of a MoE model stepping in lockstep (corrected-physics at
   * --dp > 1 on a MoE model; instance/lockstep.ts): every rank's forward pass is padded to the largest rank's token
   * count and the MoE layers see the sum of the padded counts.
   */
  readonly lockstep?: LockstepPricing;
}

/** How a model prices one rank's step of a lockstep DP group (see {@link LatencyModel.lockstep}). */
export interface LockstepPricing {
  /** Tokens of the forward pass `batch` runs (before any DP padding): what the ranks agree to pad to. */
  tokens(batch: StepBatch): number;
  /**
   * Step time (ticks, integer, at least 1) of `batch` when the forward pass is padded to `padTo` tokens (the
   * largest rank's count) and the MoE layers see dp × padTo tokens. An empty batch with padTo > 0 is a rank's
   * dummy forward pass; with padTo = 0 it costs 1, as stepTime.
   */
  stepTime(batch: StepBatch, padTo: number): number;
}

/**
 * A latency model written as `stepTime = Σ_k c_k · ∂stepTime/∂c_k` (piecewise linear and homogeneous in its
 * coefficients c), so a fit can hold the schedule fixed and solve for c by least squares.
 */
export interface LinearLatency {
  /** Coefficient names, in vector order (the profile file's keys). */
  readonly names: readonly string[];
  /** The coefficients this instance of the model uses. */
  readonly coefficients: readonly number[];
  /**
   * Writes ∂stepTime/∂c for the batch (the same arguments as {@link LatencyModel.stepTime}, before the step
   * executes) into `out` and returns the untruncated step time t: stepTime is 1 for an empty batch, else
   * max(1, trunc(t)).
   */
  stepGradient(batch: StepBatch, out: Float64Array): number;
  /** {@link stepGradient} of a lockstep rank's step padded to `padTo` tokens (LockstepPricing.stepTime's). */
  readonly stepGradientPadded?: (batch: StepBatch, padTo: number, out: Float64Array) => number;
  /** Writes ∂queueingTime/∂c into `out` (the per-request overhead before the engine sees the request). */
  queueingGradient(req: Request, out: Float64Array): void;
}

/** Architecture facts of a model, as the reference reads them from a HuggingFace config.json. */
export interface ModelConfig {
  numLayers: number;
  hiddenDim: number;
  numHeads: number;
  /** 0 = same as numHeads. */
  numKVHeads: number;
  vocabSize: number;
  /** Compute / KV bytes per parameter from torch_dtype. */
  bytesPerParam: number;
  /** Weight bytes per parameter from quantization (0 = same as bytesPerParam). */
  weightBytesPerParam: number;
  intermediateDim: number;
  /** Expert count (>= 2 for MoE, else 0). */
  numLocalExperts: number;
  numExpertsPerTok: number;
  moeExpertFFNDim: number;
  sharedExpertFFNDim: number;
  interleaveMoELayerStep: number;
  denseIntermediateDim: number;
  hiddenAct: string;
  headDim: number;
  kvLoraRank: number;
  qkRopeHeadDim: number;
  firstKDenseReplace: number;
  tieWordEmbeddings: boolean;
  maxPositionEmbeddings: number;
  /** rope_scaling as given (null when absent). */
  ropeScaling: Readonly<Record<string, unknown>> | null;
  modelType: string;
  /** Embedding / LM-head width when it differs from hiddenDim (OPT's word_embed_proj_dim); absent = hiddenDim. */
  embedDim?: number;
  /** Linear layers carry biases (OPT enable_bias, GPT-NeoX, Falcon bias); absent = no biases. */
  linearBias?: boolean;
  /** Tensor-parallel all-reduces per layer (Falcon's parallel attention sums before one); absent = 2. */
  allReducesPerLayer?: number;
  /** Layer indices with a dense MLP in a MoE model (Qwen-MoE mlp_only_layers). */
  mlpOnlyLayers?: readonly number[];
  /** DeepSeek moe_layer_freq: after the leading dense layers, every n-th layer has experts; absent = 1. */
  moeLayerFreq?: number;
  /**
   * Which layers carry which attention (`--attention-layers config`, src/latency/attention-layout.ts); absent =
   * every layer full attention, as the reference reads every config.
   */
  attention?: AttentionLayout;
  /**
   * KV-cache bytes per element from --kv-cache-dtype (fp8 = 1, bf16/fp16 = 2, fp32 = 4); absent (`auto`) = the
   * model's own precision (bytesPerParam; trained-physics' fixed 2 bytes).
   */
  kvBytesPerElement?: number;
}

/**
 * A hybrid model's layers by attention kind. The four counts sum to numLayers; `none` layers have no token
 * mixer that keeps state (Nemotron-H's MLP-only layers).
 */
export interface AttentionLayout {
  /** Full attention: a KV cache growing with the context. */
  readonly full: number;
  /** Sliding-window attention: at most `window` tokens of KV per request. */
  readonly sliding: number;
  /** Linear attention / state-space layers (Gated DeltaNet, KDA, Mamba): a constant state per request. */
  readonly linear: number;
  readonly none: number;
  /** Sliding window in tokens (0 without sliding layers). */
  readonly window: number;
  /** One linear layer's recurrent (+ convolution) state per request, in elements of the KV dtype. */
  readonly linearStateElements: number;
  /** The config.json field the layout was read from (for messages and docs). */
  readonly source: string;
}

/** KV-cache bytes per element: --kv-cache-dtype's, else the model's dtype. */
export function kvElementBytes(mc: ModelConfig): number {
  return mc.kvBytesPerElement ?? mc.bytesPerParam;
}

/** GPU facts (reference hardware_config.json fields). */
export interface HardwareConfig {
  TFlopsPeak: number;
  TFlopsFP8: number;
  BwPeakTBs: number;
  mfuPrefill: number;
  mfuDecode: number;
  MemoryGiB: number;
  /** Intra-node GPU-to-GPU bandwidth per GPU, GB/s (upstream's hardware_config field; informational). */
  IntraNodeBwGBps?: number;
  /** Inter-node bandwidth per GPU, GB/s: the default of --inter-node-bandwidth. */
  InterNodeBwGBps?: number;
  /** Interconnect and kernel efficiency (corrected-physics only); absent = the catalog's defaults. */
  physics?: GpuPhysics;
  /** A user GPU's datasheet facts and partial physics (resolution derives `physics` from them). */
  userPhysics?: UserGpuPhysics;
}
