/**
 * HuggingFace config.json → ModelConfig, with the reference's field-name fallbacks and quantization rules
 * (blis-core.md §6.3), plus the capacity parameters that KV auto-sizing reads from the same file.
 *
 * Lenient where the reference is lenient: a consumed key holding the wrong JSON type reads as absent, so any
 * config the reference accepts parses to the same values. The three dimensions every backend needs are
 * checked here so the error can name the config.json key rather than a derived field.
 */
import { LatencyConfigError, LatencyErrorCode } from './errors.js';
import type { ModelConfig } from './types.js';
import { showValue } from '../domain/errors.js';
import { attentionLayoutOf } from './attention-layout.js';

/** A parsed config.json object (or any JSON object inside it). */
export type HFConfigObject = Readonly<Record<string, unknown>>;

function isObject(v: unknown): v is HFConfigObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function invalid(field: string, message: string): never {
  throw new LatencyConfigError(LatencyErrorCode.InvalidHFConfig, field, message);
}

/**
 * The object the parser reads: the top level with `text_config` (multimodal wrappers such as Llama 4) merged
 * over it, so text-model keys win over the wrapper's.
 */
export function flattenHFConfig(raw: unknown, label = 'config.json'): HFConfigObject {
  if (!isObject(raw)) invalid('', `${label}: a HuggingFace config must be a JSON object`);
  const text = raw['text_config'];
  const hf = isObject(text) ? { ...raw, ...text } : raw;
  checkCounts(hf, label);
  return hf;
}

/**
 * Sizes and counts (layers, dimensions, heads, experts, vocabulary, positions): a number there must be a whole
 * number >= 0 (stricter than the reference, which truncates 4096.5 to 4096 and reads a negative expert count as
 * "not MoE").
 */
const COUNT_KEYS = [
  'num_hidden_layers', 'hidden_size', 'num_attention_heads', 'num_key_value_heads', 'num_kv_heads', 'multi_query_group_num',
  'intermediate_size', 'ffn_hidden_size', 'moe_intermediate_size', 'shared_expert_intermediate_size', 'n_shared_experts',
  'intermediate_size_mlp', 'num_experts_per_tok', 'interleave_moe_layer_step', 'head_dim', 'kv_lora_rank', 'qk_rope_head_dim',
  'first_k_dense_replace', 'vocab_size', 'max_position_embeddings',
  'num_experts', 'moe_num_experts', 'n_routed_experts', 'num_local_experts', 'num_routed_experts',
  'num_experts_per_token', 'num_shared_experts',
];

function checkCounts(hf: HFConfigObject, label: string): void {
  for (const key of COUNT_KEYS) {
    const v = hf[key];
    if (typeof v !== 'number') continue;
    if (!Number.isInteger(v) || v < 0) {
      invalid(key, `${label}: "${key}" must be a whole number >= 0 (a size or count), got ${JSON.stringify(v)}; fix the config`);
    }
  }
}

/** JSON number → Go `int(f)` (truncation); anything else → undefined. */
function num(hf: HFConfigObject, key: string): number | undefined {
  const v = hf[key];
  return typeof v === 'number' ? Math.trunc(v) : undefined;
}

function int(hf: HFConfigObject, key: string): number {
  return num(hf, key) ?? 0;
}

/** First key whose value is a non-zero number. */
function firstNonZero(hf: HFConfigObject, ...keys: string[]): number {
  for (const k of keys) {
    const v = int(hf, k);
    if (v !== 0) return v;
  }
  return 0;
}

const DTYPE_BYTES: ReadonlyMap<string, number> = new Map([
  ['float32', 4],
  ['float16', 2],
  ['bfloat16', 2],
  ['int8', 1],
  ['uint8', 1],
  ['fp8', 1],
  ['int4', 1],
  ['nf4', 1],
]);

/** Total-expert-count keys in vLLM's resolution order (Jamba, Dbrx, DeepSeek, Mixtral, legacy alias). */
const EXPERT_COUNT_KEYS = ['num_experts', 'moe_num_experts', 'n_routed_experts', 'num_local_experts', 'num_routed_experts'];

/** The first expert count >= 2; 0 for dense models (a single expert is dense-equivalent). */
export function resolveNumExperts(hf: HFConfigObject): number {
  for (const k of EXPERT_COUNT_KEYS) {
    const v = int(hf, k);
    if (v >= 2) return v;
  }
  return 0;
}

/** Weight bytes per parameter from `quantization_config`; 0 when it does not say. */
export function quantizedWeightBytes(qc: HFConfigObject): number {
  const method = typeof qc['quant_method'] === 'string' ? qc['quant_method'].toLowerCase() : '';
  let bits = 0;
  const rawBits = qc['bits'];
  if (typeof rawBits === 'number') bits = Math.trunc(rawBits);
  else if (typeof rawBits === 'string' && /^[+-]?\d+$/.test(rawBits)) bits = Number.parseInt(rawBits, 10);
  if (bits > 0) return bits / 8;
  if (method === 'fp8') return 1.0;
  if (method === 'compressed-tensors') {
    const groups = qc['config_groups'];
    if (isObject(groups)) {
      // Sorted keys make "the first group that states weight bits" independent of JSON key order.
      for (const key of Object.keys(groups).sort(compareBytes)) {
        const g = groups[key];
        const w = isObject(g) ? g['weights'] : undefined;
        const nb = isObject(w) ? w['num_bits'] : undefined;
        if (typeof nb === 'number' && nb > 0) return nb / 8;
      }
    }
  }
  return 0;
}

/** Byte-wise string order (Go's sort.Strings); differs from localeCompare and UTF-16 order on non-ASCII. */
function compareBytes(a: string, b: string): number {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  return Buffer.compare(ab, bb);
}

/**
 * Spellings of the MoE activation counts (upstream PR #1639: Kimi K3 writes num_experts_per_token and
 * num_shared_experts); the first non-zero one wins. A config with neither spelling reads as before.
 */
const EXPERTS_PER_TOKEN_KEYS = ['num_experts_per_tok', 'num_experts_per_token'];
const SHARED_EXPERT_KEYS = ['n_shared_experts', 'num_shared_experts'];

/** Shared-expert FFN width: explicit total, else count × per-expert width (`perExpertFallback` if unset). */
function sharedExpertDim(hf: HFConfigObject, moeExpertDim: number, perExpertFallback: number): number {
  const explicit = int(hf, 'shared_expert_intermediate_size');
  if (explicit > 0) return explicit;
  const count = firstNonZero(hf, ...SHARED_EXPERT_KEYS);
  if (count > 0) return count * (moeExpertDim === 0 ? perExpertFallback : moeExpertDim);
  return 0;
}

function requirePositive(hf: HFConfigObject, key: string, label: string): number {
  const v = num(hf, key);
  if (v === undefined || v <= 0) {
    invalid(
      key,
      `${label}: "${key}" must be a positive number (at the top level or inside "text_config"), got ${JSON.stringify(hf[key])}`,
    );
  }
  return v;
}

/**
 * Parses a HuggingFace config.json object. `label` names the source in error messages (a file path or a
 * catalog name). Weight precision comes only from `quantization_config` here; apply
 * {@link inferWeightBytesFromModelName} afterwards when it is 0, as the CLI does.
 */
export function parseHFConfig(raw: unknown, label = 'config.json', opts: HFParseOptions = {}): ModelConfig {
  const hf = opts.families === true ? normalizeHFFamilies(flattenHFConfig(raw, label)) : flattenHFConfig(raw, label);
  const numLayers = requirePositive(hf, 'num_hidden_layers', label);
  const hiddenDim = requirePositive(hf, 'hidden_size', label);
  const numHeads = requirePositive(hf, 'num_attention_heads', label);
  const kvHeads = firstNonZero(hf, 'num_key_value_heads', 'num_kv_heads', 'multi_query_group_num');
  if (kvHeads !== 0) {
    // Stricter than the reference, which would size the KV cache and attention by an impossible head count.
    const key = ['num_key_value_heads', 'num_kv_heads', 'multi_query_group_num'].find((k) => int(hf, k) !== 0)!;
    if (kvHeads < 0) invalid(key, `${label}: "${key}" must be positive, got ${kvHeads}`);
    if (kvHeads > numHeads) {
      invalid(key, `${label}: ${showValue(key)} (${kvHeads}) exceeds num_attention_heads (${numHeads}); a model has at most one KV head per attention head — fix the config`);
    }
  }

  let bytesPerParam = 0;
  const dtype = typeof hf['torch_dtype'] === 'string' ? hf['torch_dtype'] : hf['dtype'];
  if (typeof dtype === 'string') bytesPerParam = DTYPE_BYTES.get(dtype) ?? 0;

  const intermediateDim = firstNonZero(hf, 'intermediate_size', 'ffn_hidden_size');
  const moeExpertFFNDim = int(hf, 'moe_intermediate_size');
  const qc = hf['quantization_config'];

  const shape = { head_dim: 0, kv_lora_rank: 0, qk_rope_head_dim: 0, first_k_dense_replace: 0 };
  for (const key of Object.keys(shape) as Array<keyof typeof shape>) {
    const v = int(hf, key);
    if (v < 0) invalid(key, `${label}: "${key}" must be >= 0, got ${v}`);
    shape[key] = v;
  }

  const rope = hf['rope_scaling'];
  return {
    numLayers,
    hiddenDim,
    numHeads,
    numKVHeads: kvHeads === 0 ? numHeads : kvHeads,
    vocabSize: int(hf, 'vocab_size'),
    bytesPerParam,
    weightBytesPerParam: isObject(qc) ? quantizedWeightBytes(qc) : 0,
    intermediateDim,
    numLocalExperts: resolveNumExperts(hf),
    numExpertsPerTok: firstNonZero(hf, ...EXPERTS_PER_TOKEN_KEYS),
    moeExpertFFNDim,
    sharedExpertFFNDim: sharedExpertDim(hf, moeExpertFFNDim, intermediateDim),
    interleaveMoELayerStep: int(hf, 'interleave_moe_layer_step'),
    denseIntermediateDim: int(hf, 'intermediate_size_mlp'),
    hiddenAct: typeof hf['hidden_act'] === 'string' ? hf['hidden_act'] : '',
    headDim: shape.head_dim,
    kvLoraRank: shape.kv_lora_rank,
    qkRopeHeadDim: shape.qk_rope_head_dim,
    firstKDenseReplace: shape.first_k_dense_replace,
    tieWordEmbeddings: hf['tie_word_embeddings'] === true,
    maxPositionEmbeddings: int(hf, 'max_position_embeddings'),
    ropeScaling: isObject(rope) ? rope : null,
    modelType: typeof hf['model_type'] === 'string' ? hf['model_type'] : '',
    ...(opts.families === true ? familyExtras(hf) : {}),
    ...(opts.attentionLayers === true ? layoutField(hf, numLayers, numHeads, shape.head_dim > 0 ? shape.head_dim : hiddenDim / numHeads, label) : {}),
  };
}

function layoutField(hf: HFConfigObject, layers: number, heads: number, headDim: number, label: string): Pick<ModelConfig, 'attention'> {
  const attention = attentionLayoutOf(hf, layers, heads, headDim, label);
  return attention === undefined ? {} : { attention };
}

export interface HFParseOptions {
  /**
   * Read the families whose config.json names things its own way (OPT, GPT-NeoX, Falcon, Qwen-MoE's sparse
   * steps, DeepSeek's MoE frequency) as their HuggingFace/vLLM model classes do ({@link normalizeHFFamilies}).
   * corrected-physics and `--semantics corrected` set it; the reference's parser (default) reads the common
   * keys only, so an OPT config has no intermediate size there.
   */
  readonly families?: boolean;
  /**
   * `--attention-layers config`: read the hybrid layout (full / sliding-window / linear-attention layers) into
   * `ModelConfig.attention` (src/latency/attention-layout.ts); off = every layer full attention, as the reference.
   */
  readonly attentionLayers?: boolean;
}

const bool = (hf: HFConfigObject, key: string): boolean | undefined => (typeof hf[key] === 'boolean' ? hf[key] : undefined);
const FALCON_TYPES: ReadonlySet<string> = new Set(['falcon', 'RefinedWeb', 'RefinedWebModel']);

/**
 * A flattened config.json with each family's own keys mapped to the common ones, as the family's HuggingFace
 * config class and vLLM model read them (transformers `OPTConfig`, `GPTNeoXConfig`, `FalconConfig`,
 * `Qwen2MoeConfig`, `DeepseekV2Config`; vLLM `model_executor/models/{opt,gpt_neox,falcon,qwen2_moe,deepseek_v2}.py`):
 *
 * - any family: `activation_function` (OPT, GPT-2/J) or `activation` (Falcon) is the MLP activation when
 *   `hidden_act` is absent;
 * - OPT: the MLP width is `ffn_dim`; ReLU, no gate (two matrices); `word_embed_proj_dim` is the embedding and
 *   LM-head width (with project_in/out matrices when it differs from hidden_size); `enable_bias` (default true);
 * - GPT-NeoX: `intermediate_size` (default 4·hidden), GELU without gate, biases; `rotary_pct` (rotary on part of
 *   each head: elementwise work, not priced) and `use_parallel_residual` (attention and MLP read the same input;
 *   vLLM still all-reduces each) change neither FLOPs, bytes nor collectives;
 * - Falcon: `n_layer`, `n_head`, `n_head_kv` are the layers, heads and KV heads; KV heads are `num_kv_heads`
 *   with `new_decoder_architecture`, 1 with `multi_query`, else one per head; the MLP is `ffn_hidden_size` or
 *   4·hidden, GELU without gate; `bias` (default false); with `new_decoder_architecture` or `parallel_attn` vLLM
 *   sums attention and MLP before one all-reduce per layer (not two);
 * - Qwen-MoE: `decoder_sparse_step` places the experts every n-th layer and `mlp_only_layers` lists dense ones;
 *   DeepSeek: `moe_layer_freq` likewise after the `first_k_dense_replace` leading dense layers.
 */
export function normalizeHFFamilies(hf: HFConfigObject): HFConfigObject {
  const out: Record<string, unknown> = { ...hf };
  const type = typeof hf['model_type'] === 'string' ? hf['model_type'] : '';
  const set = (key: string, v: unknown): void => {
    if (v !== undefined && (typeof out[key] !== 'number' || out[key] === 0)) out[key] = v;
  };
  if (typeof hf['hidden_act'] !== 'string') {
    const act = typeof hf['activation_function'] === 'string' ? hf['activation_function'] : typeof hf['activation'] === 'string' ? hf['activation'] : undefined;
    if (act !== undefined) out['hidden_act'] = act;
  }
  if (type === 'opt') {
    set('intermediate_size', num(hf, 'ffn_dim'));
    if (typeof out['hidden_act'] !== 'string') out['hidden_act'] = 'relu';
  } else if (type === 'gpt_neox') {
    const d = num(hf, 'hidden_size');
    set('intermediate_size', d === undefined ? undefined : 4 * d);
    if (typeof out['hidden_act'] !== 'string') out['hidden_act'] = 'gelu';
  } else if (FALCON_TYPES.has(type)) {
    set('num_hidden_layers', num(hf, 'n_layer'));
    set('num_attention_heads', num(hf, 'n_head'));
    const heads = typeof out['num_attention_heads'] === 'number' ? Math.trunc(out['num_attention_heads']) : 0;
    const groups = num(hf, 'num_kv_heads') ?? num(hf, 'n_head_kv');
    const kv = bool(hf, 'new_decoder_architecture') === true ? (groups ?? heads) : bool(hf, 'multi_query') === true ? 1 : heads;
    // Falcon's KV heads come from the flags above only; a stray num_key_value_heads does not override them.
    out['num_key_value_heads'] = kv;
    delete out['num_kv_heads'];
    const d = num(hf, 'hidden_size');
    set('intermediate_size', num(hf, 'ffn_hidden_size') ?? (d === undefined ? undefined : 4 * d));
    if (typeof out['hidden_act'] !== 'string') out['hidden_act'] = 'gelu';
  }
  return out;
}

/** The family facts beyond the common ModelConfig fields (see {@link normalizeHFFamilies}). */
function familyExtras(hf: HFConfigObject): Partial<ModelConfig> {
  const type = typeof hf['model_type'] === 'string' ? hf['model_type'] : '';
  const extras: { -readonly [K in keyof ModelConfig]?: ModelConfig[K] } = {};
  if (type === 'opt') {
    const proj = int(hf, 'word_embed_proj_dim');
    if (proj > 0) extras.embedDim = proj;
    extras.linearBias = bool(hf, 'enable_bias') ?? true;
  } else if (type === 'gpt_neox') {
    extras.linearBias = bool(hf, 'attention_bias') ?? true;
  } else if (FALCON_TYPES.has(type)) {
    extras.linearBias = bool(hf, 'bias') ?? false;
    if (bool(hf, 'new_decoder_architecture') === true || (bool(hf, 'parallel_attn') ?? true)) extras.allReducesPerLayer = 1;
  }
  const step = int(hf, 'decoder_sparse_step');
  if (step > 1) extras.interleaveMoELayerStep = step;
  const freq = int(hf, 'moe_layer_freq');
  if (freq > 1) extras.moeLayerFreq = freq;
  const dense = hf['mlp_only_layers'];
  if (Array.isArray(dense) && dense.length > 0) extras.mlpOnlyLayers = dense.filter((x): x is number => Number.isInteger(x) && x >= 0);
  return extras;
}

/** Facts KV auto-capacity needs beyond ModelConfig (reference KVCapacityParams). */
export interface KVCapacityParams {
  readonly isMoE: boolean;
  readonly numLocalExperts: number;
  readonly tieWordEmbeddings: boolean;
  readonly hiddenAct: string;
  /** Per-routed-expert FFN width; 0 = use intermediate_size. */
  readonly moeExpertFFNDim: number;
  /** Total shared-expert FFN width; 0 = none. */
  readonly sharedExpertFFNDim: number;
}

/**
 * Reads KV-capacity facts from a config.json object. Throws `MOE_EXPERT_COUNT_MISSING` when the config
 * looks MoE (shared experts or experts-per-token set) but gives no total expert count: weights cannot be
 * sized, so the caller should fall back to an explicit `--total-kv-blocks` (the reference warns and keeps
 * its default block count).
 */
export function extractKVCapacityParams(raw: unknown, label = 'config.json', opts: HFParseOptions = {}): KVCapacityParams {
  const hf = opts.families === true ? normalizeHFFamilies(flattenHFConfig(raw, label)) : flattenHFConfig(raw, label);
  const hiddenAct = typeof hf['hidden_act'] === 'string' ? hf['hidden_act'] : '';
  const tieWordEmbeddings = hf['tie_word_embeddings'] === true;
  const experts = resolveNumExperts(hf);
  if (experts >= 2) {
    const moeDim = int(hf, 'moe_intermediate_size');
    return {
      isMoE: true,
      numLocalExperts: experts,
      tieWordEmbeddings,
      hiddenAct,
      moeExpertFFNDim: moeDim,
      // Unlike parseHFConfig, the capacity path falls back to intermediate_size only (not ffn_hidden_size).
      sharedExpertFFNDim: sharedExpertDim(hf, moeDim, int(hf, 'intermediate_size')),
    };
  }
  for (const key of [...SHARED_EXPERT_KEYS, ...EXPERTS_PER_TOKEN_KEYS]) {
    const v = int(hf, key);
    if (v > 0) {
      throw new LatencyConfigError(
        LatencyErrorCode.MoEExpertCountMissing,
        key,
        `${label}: model appears to be MoE (${key}=${v}) but has no total expert count ` +
          `(${EXPERT_COUNT_KEYS.join(', ')}); weights cannot be sized. Set --total-kv-blocks explicitly`,
      );
    }
  }
  return { isMoE: false, numLocalExperts: 0, tieWordEmbeddings, hiddenAct, moeExpertFFNDim: 0, sharedExpertFFNDim: 0 };
}

const W_BITS_A_BITS = /(?:^|[.\-_/])w(\d+)a\d+(?:$|[.\-_])/i;
const FP8_NAME = /(?:^|[.\-_/])fp8(?:$|[.\-_])/i;

/**
 * Weight bytes per parameter inferred from a model name (`...quantized.w4a16` → 0.5, `...-FP8-dynamic` → 1);
 * 0 when the name says nothing. The CLI uses it only when quantization_config gave no answer.
 */
export function inferWeightBytesFromModelName(name: string): number {
  const m = W_BITS_A_BITS.exec(name);
  if (m !== null) {
    const bits = Number.parseInt(m[1]!, 10);
    if (Number.isSafeInteger(bits) && bits > 0) return bits / 8;
  }
  return FP8_NAME.test(name) ? 1.0 : 0;
}

/** The CLI's rule: keep quantization_config's weight precision, else infer it from the model name. */
export function applyWeightPrecisionFallback(model: ModelConfig, modelName: string): ModelConfig {
  if (model.weightBytesPerParam !== 0) return model;
  return { ...model, weightBytesPerParam: inferWeightBytesFromModelName(modelName) };
}

/**
 * The reference's warn-level message after the weight-precision fallback, if any: a quantization_config it
 * could not read, or a compute dtype of one byte or less with no weight precision (likely quantized).
 * `model` is the result of {@link applyWeightPrecisionFallback}; `raw` the config.json object.
 */
export function weightPrecisionWarning(model: ModelConfig, raw: unknown): string | undefined {
  if (model.weightBytesPerParam !== 0) return undefined;
  if (Object.hasOwn(flattenHFConfig(raw), 'quantization_config')) {
    return 'HuggingFace config has quantization_config but weight precision could not be determined';
  }
  if (model.bytesPerParam > 0 && model.bytesPerParam <= 1) {
    return (
      `model reports ${model.bytesPerParam.toFixed(0)} byte(s)/param (possible quantization); ` +
      'step time estimates may be inaccurate for quantized models'
    );
  }
  return undefined;
}
