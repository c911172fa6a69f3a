/**
 * KV-cache auto-capacity (reference blis-core.md §6.4, after llm-d-benchmark's capacity planner) and the
 * CLI's max-model-len derivation from max_position_embeddings / rope_scaling.
 *
 * Memory is pooled over the TP group but divided by the per-GPU block size, so the block count grows roughly
 * with tp²; the reference's constants were tuned against that, so it is reproduced by default. Corrected
 * semantics (docs/reference-differences.md E10) divide the pooled memory by the pooled block size: a block holds
 * its tokens' KV on every rank (KV heads replicated when there are fewer than tp, as vLLM does).
 */
import { architectureOf } from './architecture.js';
import { kvPoolLayers } from './attention-layout.js';
import { LatencyConfigError, LatencyErrorCode, isPositiveFinite } from './errors.js';
import type { KVCapacityParams } from './hf-config.js';
import { kvElementBytes, type HardwareConfig, type ModelConfig } from './types.js';

const ACTIVATION_GIB_DENSE = 5.5;
const ACTIVATION_GIB_MOE = 8.0;
const NON_TORCH_GIB_TP1 = 0.15;
const NON_TORCH_GIB_MULTI = 0.6;
const GIB = 2 ** 30;

/** Gated 3-matrix MLP activations; capacity sizing assumes that shape. '' = unspecified, assumed gated. */
const SWIGLU_FAMILY: ReadonlySet<string> = new Set(['silu', 'swiglu', 'geglu', 'situ', '']);

export { KV_CACHE_DTYPES, kvCacheDtypeBytes } from '../domain/engine-features.js';

function bad(field: string, message: string): never {
  throw new LatencyConfigError(LatencyErrorCode.InvalidKVCapacityInput, field, `KV capacity: ${message}`);
}

function effectiveHeadDim(mc: ModelConfig): number {
  if (mc.headDim > 0) return mc.headDim;
  return mc.numHeads === 0 ? 0 : Math.trunc(mc.hiddenDim / mc.numHeads);
}

/**
 * Per-GPU KV bytes per token (elements of --kv-cache-dtype's size: the model's dtype unless set). MLA models store one compressed latent per layer, replicated on every TP rank;
 * others store K and V per KV head, sharded by TP (optimistic when KV heads < tp, as in the reference). A hybrid
 * layout (`mc.attention`) counts its full-attention layers only (its sliding-window layers when none is full):
 * the other layers' memory is set aside by {@link hybridReservedBytes}.
 */
export function kvBytesPerToken(mc: ModelConfig, tp: number, corrected = false): number {
  const layers = mc.attention === undefined ? mc.numLayers : kvPoolLayers(mc.attention);
  if (!Number.isInteger(tp) || tp <= 0) bad('tp', `tp must be a positive integer, got ${tp}`);
  if (mc.numLayers <= 0) bad('num_hidden_layers', `num_hidden_layers must be > 0, got ${mc.numLayers}`);
  if (mc.numHeads <= 0) bad('num_attention_heads', `num_attention_heads must be > 0, got ${mc.numHeads}`);
  if (mc.hiddenDim <= 0) bad('hidden_size', `hidden_size must be > 0, got ${mc.hiddenDim}`);
  if (!isPositiveFinite(mc.bytesPerParam)) {
    bad('torch_dtype', `bytes per parameter must be > 0, got ${mc.bytesPerParam} (set torch_dtype)`);
  }
  if (mc.kvLoraRank > 0) {
    const perToken = layers * (mc.kvLoraRank + mc.qkRopeHeadDim) * kvElementBytes(mc);
    if (perToken <= 0) bad('qk_rope_head_dim', `MLA latent width kv_lora_rank + qk_rope_head_dim must be > 0`);
    return perToken;
  }
  if (mc.headDim <= 0 && mc.hiddenDim % mc.numHeads !== 0) {
    bad(
      'hidden_size',
      `hidden_size (${mc.hiddenDim}) must be divisible by num_attention_heads (${mc.numHeads}) when head_dim is unset`,
    );
  }
  if (mc.numKVHeads < 0) bad('num_key_value_heads', `num_key_value_heads must be >= 0, got ${mc.numKVHeads}`);
  const kvHeads = mc.numKVHeads === 0 ? mc.numHeads : mc.numKVHeads;
  if (kvHeads >= tp && kvHeads % tp !== 0) {
    bad('tp', `num_key_value_heads (${kvHeads}) must be divisible by tp (${tp})`);
  }
  const perGPU = (layers * 2.0 * effectiveHeadDim(mc) * (corrected ? Math.max(kvHeads, tp) : kvHeads) * kvElementBytes(mc)) / tp;
  if (perGPU <= 0) bad('num_key_value_heads', `per-token KV bytes came out as ${perGPU}; check head_dim and torch_dtype`);
  return perGPU;
}

/**
 * Parameter-count estimate (3-matrix MLP, all experts, embeddings, norms) times weight bytes. `corrected`
 * (L2, L3, E11): the layers, widths and shared experts of src/latency/architecture.ts, the one definition the
 * step-time models use in that mode (Llama 4 interleaving and shared expert, the query width heads·head_dim,
 * shared experts sized from ffn_hidden_size when intermediate_size is absent).
 */
export function modelWeightBytes(mc: ModelConfig, p: KVCapacityParams, corrected = false): number {
  if (corrected) return correctedWeightBytes(mc, p);
  const d = mc.hiddenDim;
  const vocab = mc.vocabSize;
  const L = mc.numLayers;
  const inter = mc.intermediateDim;
  const kvHeads = mc.numKVHeads === 0 ? mc.numHeads : mc.numKVHeads;
  const kvDim = kvHeads * effectiveHeadDim(mc);
  const attnPerLayer = d * (d + 2 * kvDim) + d * d;
  const denseMLP = 3 * d * inter;
  let mlp: number;
  if (p.isMoE && p.numLocalExperts >= 2) {
    const expertDim = p.moeExpertFFNDim > 0 ? p.moeExpertFFNDim : inter;
    let moePerLayer = 3 * d * expertDim * p.numLocalExperts;
    if (p.sharedExpertFFNDim > 0) moePerLayer += 3 * d * p.sharedExpertFFNDim;
    moePerLayer += p.numLocalExperts * d;
    const densePrefixMLP = mc.denseIntermediateDim > 0 ? 3 * d * mc.denseIntermediateDim : denseMLP;
    const denseLayers = Math.min(Math.max(mc.firstKDenseReplace, 0), L);
    mlp = denseLayers * densePrefixMLP + (L - denseLayers) * moePerLayer;
  } else {
    mlp = L * denseMLP;
  }
  const params = vocab * d + L * (attnPerLayer + 2 * d) + mlp + (p.tieWordEmbeddings ? 0 : vocab * d) + d;
  const wbpp = mc.weightBytesPerParam > 0 ? mc.weightBytesPerParam : mc.bytesPerParam;
  return Math.trunc(params * wbpp);
}

function correctedWeightBytes(mc: ModelConfig, p: KVCapacityParams): number {
  const a = architectureOf(mc);
  const d = mc.hiddenDim;
  const vocab = mc.vocabSize;
  const L = mc.numLayers;
  const attnPerLayer = d * (a.qDim + 2 * a.kvHeads * a.headDim) + a.qDim * d;
  const m = a.mlpMatrices;
  const moePerLayer = m * d * a.expertWidth * p.numLocalExperts + m * d * a.sharedWidth + p.numLocalExperts * d;
  const mlp = a.denseLayers * m * d * a.denseWidth + (p.isMoE ? a.moeLayers * moePerLayer : 0);
  const params = vocab * d + L * (attnPerLayer + 2 * d) + mlp + (p.tieWordEmbeddings ? 0 : vocab * d) + d;
  const wbpp = mc.weightBytesPerParam > 0 ? mc.weightBytesPerParam : mc.bytesPerParam;
  return Math.trunc(params * wbpp);
}

export interface KVCapacityOptions {
  readonly tp: number;
  /** Data parallelism; multiplies the block count for MoE models only. Default 1. */
  readonly dp?: number;
  readonly blockSize: number;
  /** Fraction of GPU memory vLLM may use, in (0, 1]; the CLI default is 0.9. */
  readonly gpuMemoryUtilization: number;
  /** HBM reserved for resident LoRA adapters (bytes, per DP rank). Default 0. */
  readonly adapterReservedBytes?: number;
  /** --semantics corrected: blocks sized over the whole TP group (E10). */
  readonly corrected?: boolean;
  /**
   * Divide the pooled memory by the pooled block size (what vLLM allocates), instead of the reference's
   * per-GPU block size that makes the count grow with tp². Off by default for parity; corrected-physics sets it.
   */
  readonly perGpuBlocks?: boolean;
  /**
   * Families of config.json read as their model classes do (corrected-physics, `--semantics corrected`): an MLP
   * without a gate (OPT's ReLU, GPT-NeoX's and Falcon's GELU) is sized by the architecture (two matrices)
   * instead of being refused.
   */
  readonly families?: boolean;
  /**
   * Running requests the sliding-window and linear-attention layers of a hybrid model are budgeted for
   * ({@link hybridReservedBytes}); --max-num-seqs, default 256.
   */
  readonly maxNumSeqs?: number;
  /**
   * Expert-parallel group size (upstream #1656/#1660; vLLM --enable-expert-parallel: tp·dp). Each GPU then holds
   * num_experts/ep WHOLE routed experts instead of a 1/tp shard of every expert, so one DP rank's tp GPUs hold
   * the share tp/ep of the routed-expert bytes R: R·(1 − tp/ep) less weight, more KV blocks. The group is clamped
   * to the routed-expert count (a GPU holds at least one whole expert); at or below tp nothing changes.
   * Absent, 0 or 1 = off (the pinned reference).
   */
  readonly expertParallelSize?: number;
}

/** The running requests a hybrid model's non-pooled layers are budgeted for when the caller does not say. */
export const DEFAULT_HYBRID_SEQS = 256;

/**
 * Bytes of `allocatable` (pooled over the TP group) that a hybrid model's sliding-window and linear-attention
 * layers take, outside the block pool (which holds the full-attention layers' KV, {@link kvBytesPerToken}):
 * `maxNumSeqs` requests each holding a whole window on every sliding layer and one state on every linear layer
 * (vLLM V0's Mamba cache was sized that way; V1's hybrid allocator takes the same pages from a shared pool as
 * requests run). Each part is capped at the share of memory those layers would take if every layer were
 * budgeted per token, so a hybrid model never gets fewer blocks than with every layer full attention.
 */
export function hybridReservedBytes(mc: ModelConfig, tp: number, corrected: boolean, maxNumSeqs: number, allocatable: number): number {
  const a = mc.attention;
  if (a === undefined) return 0;
  const pool = kvPoolLayers(a);
  const perLayerToken = (kvBytesPerToken(mc, tp, corrected) * tp) / pool;
  const sliding = a.full > 0 ? a.sliding : 0;
  const budgeted = pool + sliding + a.linear;
  const slidingBytes = Math.min(maxNumSeqs * a.window * sliding * perLayerToken, (allocatable * sliding) / budgeted);
  const linearBytes = Math.min(maxNumSeqs * a.linear * a.linearStateElements * mc.bytesPerParam, (allocatable * a.linear) / budgeted);
  return slidingBytes + linearBytes;
}

/**
 * Routed-expert weight bytes of the whole model (every MoE layer's experts, no shared expert, no router): the
 * part expert parallelism spreads over the EP group. 0 for a dense model.
 */
export function routedExpertBytes(mc: ModelConfig, p: KVCapacityParams, corrected = false): number {
  if (!p.isMoE || p.numLocalExperts < 2) return 0;
  const wbpp = mc.weightBytesPerParam > 0 ? mc.weightBytesPerParam : mc.bytesPerParam;
  if (corrected) {
    const a = architectureOf(mc);
    return a.moeLayers * a.mlpMatrices * mc.hiddenDim * a.expertWidth * p.numLocalExperts * wbpp;
  }
  const expertDim = p.moeExpertFFNDim > 0 ? p.moeExpertFFNDim : mc.intermediateDim;
  const moeLayers = mc.numLayers - Math.min(Math.max(mc.firstKDenseReplace, 0), mc.numLayers);
  return moeLayers * 3 * mc.hiddenDim * expertDim * p.numLocalExperts * wbpp;
}

/**
 * Total KV blocks that fit next to the weights and fixed overheads (reference CalculateKVBlocks). Throws
 * `INSUFFICIENT_GPU_MEMORY` with the smallest GPU count that would fit when the model does not fit at `tp`.
 */
export function calculateKVBlocks(
  mc: ModelConfig,
  hw: HardwareConfig,
  params: KVCapacityParams,
  opts: KVCapacityOptions,
): number {
  const { tp, blockSize, gpuMemoryUtilization: util } = opts;
  const dp = opts.dp ?? 1;
  const reserved = opts.adapterReservedBytes ?? 0;
  if (!(util > 0 && util <= 1.0)) bad('gpuMemoryUtilization', `--gpu-memory-utilization must be in (0, 1], got ${util}`);
  if (!(reserved >= 0)) bad('adapterReservedBytes', `adapter reservation must be >= 0 bytes, got ${reserved}`);
  if (!(blockSize > 0)) bad('blockSize', `--block-size-in-tokens must be > 0, got ${blockSize}`);
  if (!(dp >= 1)) bad('dp', `dp must be >= 1, got ${dp}`);
  if (mc.intermediateDim <= 0) bad('intermediate_size', `intermediate_size must be > 0, got ${mc.intermediateDim}`);
  if (mc.vocabSize <= 0) bad('vocab_size', `vocab_size must be > 0, got ${mc.vocabSize}`);
  if (!isPositiveFinite(hw.MemoryGiB)) {
    bad('MemoryGiB', `GPU MemoryGiB must be > 0, got ${hw.MemoryGiB}; add it to the hardware config or pass --total-kv-blocks`);
  }
  if (mc.weightBytesPerParam !== 0 && !isPositiveFinite(mc.weightBytesPerParam)) {
    bad('quantization_config', `weight bytes per parameter must be > 0 when set, got ${mc.weightBytesPerParam}`);
  }
  const ungated = opts.families === true && !SWIGLU_FAMILY.has(params.hiddenAct);
  if (!SWIGLU_FAMILY.has(params.hiddenAct) && !ungated) {
    bad(
      'hidden_act',
      `unsupported activation "${params.hiddenAct}"; only SwiGLU-family activations (silu, swiglu, geglu, situ) ` +
        'are supported for weight estimation. Pass --total-kv-blocks explicitly',
    );
  }

  const corrected = opts.corrected === true;
  // Corrected: one block occupies its per-GPU bytes on each of the tp ranks of the pooled memory below.
  const perToken = kvBytesPerToken(mc, tp, corrected) * (corrected ? tp : 1);
  const perBlock = Math.trunc(perToken * blockSize);
  if (perBlock <= 0) bad('blockSize', `per-block KV bytes is ${perBlock}; check torch_dtype and tp`);

  const availableGiB = hw.MemoryGiB * util * tp;
  const ep = opts.expertParallelSize ?? 0;
  if (!(Number.isInteger(ep) && ep >= 0)) bad('expertParallelSize', `expert-parallel group size must be an integer >= 0, got ${ep}`);
  const epEff = Math.min(ep, params.numLocalExperts);
  // Expert parallelism: this rank's tp GPUs hold tp/ep of the routed experts instead of all of them.
  const epFreed = params.isMoE && epEff > tp ? routedExpertBytes(mc, params, corrected || ungated) * (1 - tp / epEff) : 0;
  const weightGiB = (epFreed > 0 ? modelWeightBytes(mc, params, corrected || ungated) - epFreed : modelWeightBytes(mc, params, corrected || ungated)) / GIB;
  const activationGiB = params.isMoE ? ACTIVATION_GIB_MOE : ACTIVATION_GIB_DENSE;
  const nonTorchGiB = (tp === 1 ? NON_TORCH_GIB_TP1 : NON_TORCH_GIB_MULTI) * tp;
  const reservedGiB = reserved / GIB;
  const overheadGiB = weightGiB + activationGiB + nonTorchGiB + reservedGiB;

  if (overheadGiB >= availableGiB) {
    const perGPU = hw.MemoryGiB * util;
    const perGPUCapacity = perGPU - NON_TORCH_GIB_MULTI;
    if (perGPUCapacity <= 0) {
      throw new LatencyConfigError(
        LatencyErrorCode.InsufficientGPUMemory,
        'MemoryGiB',
        `KV capacity: per-GPU capacity is ${perGPUCapacity.toFixed(2)} GiB (${perGPU.toFixed(2)} GiB usable - ` +
          `${NON_TORCH_GIB_MULTI.toFixed(2)} GiB non-torch overhead); the model cannot fit at any TP`,
      );
    }
    const minTP = Math.ceil((weightGiB + activationGiB + reservedGiB) / perGPUCapacity);
    throw new LatencyConfigError(
      LatencyErrorCode.InsufficientGPUMemory,
      'tp',
      `KV capacity: model overhead (${overheadGiB.toFixed(2)} GiB = ${weightGiB.toFixed(2)} weights + ` +
        `${activationGiB.toFixed(2)} activation + ${nonTorchGiB.toFixed(2)} non-torch + ${reservedGiB.toFixed(2)} ` +
        `lora-adapter-reservation) exceeds available GPU memory (${availableGiB.toFixed(2)} GiB = ` +
        `${hw.MemoryGiB.toFixed(1)} GiB × ${(util * 100).toFixed(0)}% util × ${tp} GPUs). ` +
        `Minimum GPUs required per instance: ${minTP}`,
    );
  }

  let allocatableBytes = Math.trunc((availableGiB - overheadGiB) * GIB);
  if (mc.attention !== undefined) {
    const seqs = opts.maxNumSeqs ?? DEFAULT_HYBRID_SEQS;
    if (!(Number.isInteger(seqs) && seqs > 0)) bad('maxNumSeqs', `--max-num-seqs must be a positive integer, got ${seqs}`);
    allocatableBytes -= Math.ceil(hybridReservedBytes(mc, tp, corrected, seqs, allocatableBytes));
  }
  // Corrected semantics already pool the block over the tp ranks (and replicate KV heads below tp).
  let blocks = Math.trunc(allocatableBytes / (opts.perGpuBlocks === true && !corrected ? perBlock * tp : perBlock));
  if (blocks <= 0) {
    bad('MemoryGiB', `computed 0 blocks (allocatable ${(allocatableBytes / GIB).toFixed(2)} GiB, ${perBlock} bytes per block)`);
  }
  if (params.isMoE && dp > 1) blocks *= dp;
  return blocks;
}

/** rope_scaling types whose max_position_embeddings already covers the scaled context (vLLM's exclusions). */
const ROPE_PRESCALED_TYPES: ReadonlySet<string> = new Set(['su', 'longrope', 'llama3']);

/** Go's float64(math.MaxInt): the overflow bound the reference guards against. */
const MAX_INT_F = 2 ** 63;

/**
 * max_position_embeddings scaled by rope_scaling.factor where vLLM would scale it (reference
 * applyRopeScaling). Returns the input unchanged, with `applied` false, when scaling does not apply.
 */
export function applyRopeScaling(
  maxPosEmb: number,
  modelType: string,
  ropeScaling: unknown,
): { readonly scaled: number; readonly applied: boolean } {
  const unchanged = { scaled: maxPosEmb, applied: false };
  if (maxPosEmb <= 0) return unchanged;
  // Substring match: multimodal wrappers report "gemma3", their text config "gemma3_text".
  if (modelType.includes('gemma3')) return unchanged;
  if (typeof ropeScaling !== 'object' || ropeScaling === null || Array.isArray(ropeScaling)) return unchanged;
  const rope = ropeScaling as Readonly<Record<string, unknown>>;
  const ropeType = ropeTypeOf(rope);
  if (ROPE_PRESCALED_TYPES.has(ropeType)) return unchanged;
  const factor = rope['factor'];
  if (typeof factor !== 'number' || !(factor > 1.0) || !Number.isFinite(factor)) return unchanged;
  let base = maxPosEmb;
  if (ropeType === 'yarn') {
    const orig = rope['original_max_position_embeddings'];
    if (typeof orig === 'number' && orig > 0) {
      if (orig >= MAX_INT_F) return unchanged;
      base = Math.trunc(orig);
    }
  }
  const product = base * factor;
  if (product >= MAX_INT_F || product < 0) return unchanged;
  return { scaled: Math.trunc(product), applied: true };
}

function ropeTypeOf(rope: Readonly<Record<string, unknown>>): string {
  const t = rope['type'];
  if (typeof t === 'string' && t !== '') return t;
  const rt = rope['rope_type'];
  return typeof rt === 'string' ? rt : '';
}

export interface MaxModelLenResolution {
  /** Max total sequence length (input + output); 0 = unlimited. */
  readonly maxModelLen: number;
  /** Messages the reference logs at warn level (shown by default). */
  readonly warnings: readonly string[];
  /** Messages the reference logs at info level. */
  readonly info: readonly string[];
}

/**
 * The CLI's max-model-len for the analytical backends: `explicit` (the --max-model-len flag, `undefined` when
 * not given; an explicit 0 means unlimited and disables derivation) or else max_position_embeddings with
 * rope scaling; then, in both cases, capped at the KV capacity `totalKvBlocks·blockSize` so a single request
 * can never need more blocks than exist.
 */
export function resolveMaxModelLen(
  model: ModelConfig,
  totalKvBlocks: number,
  blockSize: number,
  explicit: number | undefined,
): MaxModelLenResolution {
  const warnings: string[] = [];
  const info: string[] = [];
  let maxModelLen = explicit ?? 0;
  if (explicit === undefined && model.maxPositionEmbeddings > 0) {
    const maxPos = model.maxPositionEmbeddings;
    maxModelLen = maxPos;
    const { scaled, applied } = applyRopeScaling(maxPos, model.modelType, model.ropeScaling);
    const rope = model.ropeScaling;
    if (applied && rope !== null) {
      const factor = rope['factor'] as number;
      info.push(`applying ${ropeTypeOf(rope)} rope_scaling factor ${factor.toFixed(1)}: ${maxPos} → ${scaled}`);
      maxModelLen = scaled;
    } else if (model.modelType.includes('gemma3')) {
      info.push('skipping rope_scaling for gemma3 (max_position_embeddings is pre-scaled)');
    } else if (rope !== null && Object.hasOwn(rope, 'factor')) {
      warnings.push(
        'rope_scaling.factor present but not applied (excluded type, invalid value, or overflow); ' +
          'using max_position_embeddings as-is',
      );
    }
    info.push(`auto-derived max-model-len=${maxModelLen} from max_position_embeddings`);
  }
  if (maxModelLen > 0 && blockSize > 0) {
    const blocksNeeded = Math.ceil(maxModelLen / blockSize);
    if (blocksNeeded > totalKvBlocks) {
      const capped = totalKvBlocks * blockSize;
      warnings.push(
        `max-model-len ${maxModelLen} exceeds KV capacity (${totalKvBlocks} blocks × ${blockSize} tokens); ` +
          `capping to ${capped} tokens`,
      );
      maxModelLen = capped;
    }
  }
  if (maxModelLen < 0) {
    throw new LatencyConfigError(
      LatencyErrorCode.InvalidMaxModelLen,
      'maxModelLen',
      `--max-model-len must be >= 0, got ${maxModelLen}`,
    );
  }
  return { maxModelLen, warnings, info };
}
