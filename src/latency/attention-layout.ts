/**
 * Hybrid attention in config.json (`--attention-layers config`, issue 30 feature 5): which layers keep a full KV
 * cache, which a sliding window of it, and which a constant linear-attention / state-space state. The reference
 * pinned by blis-ts reads every layer as full attention; upstream later sized the KV cache over Kimi's
 * full-attention layers only (inference-sim PRs #1644, #1650). The fields and families read here, in order (the
 * first that answers decides):
 *
 * 1. `layer_types` (transformers' per-layer list: Gemma 2/3, gpt-oss, Qwen3-Next, Mistral/Qwen2 with windows):
 *    "full_attention", "sliding_attention", "linear_attention";
 * 2. `layers_block_type` (Nemotron-H and other Mamba hybrids): "attention", "mamba" (linear), "mlp"/"moe" (no mixer);
 * 3. `hybrid_override_pattern` (Nemotron-H): one character a layer, `*` attention, `M` Mamba, `-`/`E` MLP/MoE only;
 * 4. `linear_attn_config.full_attn_layers` (Kimi Linear / Kimi K3): those layers full (MLA), the rest KDA;
 * 5. `full_attention_interval` k (Qwen3-Next): layer i full when (i + 1) % k == 0, the rest Gated DeltaNet;
 * 6. `attn_layer_period` p / `attn_layer_offset` o (Jamba): layer i full when i % p == o, the rest Mamba;
 * 7. `sliding_window` without a layer list (unless `use_sliding_window` is false): Gemma 3's
 *    `sliding_window_pattern` k (full when (i + 1) % k == 0), Gemma 2's alternation (even layers sliding),
 *    Qwen2's `max_window_layers` (layers from it on sliding, only with `use_sliding_window: true`), else every
 *    layer (Mistral 7B).
 *
 * A layout whose layers are all full attention is no layout (`undefined`): the model then runs exactly as with
 * `--attention-layers full`.
 */
import { LatencyConfigError, LatencyErrorCode } from './errors.js';
import type { AttentionLayout } from './types.js';

/** `--attention-layers`: every layer full attention (the reference), or the config.json's layout. */
export const ATTENTION_LAYER_MODES = ['full', 'config'] as const;
export type AttentionLayerMode = (typeof ATTENTION_LAYER_MODES)[number];

type Config = Readonly<Record<string, unknown>>;
type Kind = 'full' | 'sliding' | 'linear' | 'none';

const KINDS: ReadonlyMap<string, Kind> = new Map([
  ['full_attention', 'full'],
  ['attention', 'full'],
  ['sliding_attention', 'sliding'],
  ['linear_attention', 'linear'],
  ['mamba', 'linear'],
  ['mamba2', 'linear'],
  ['mlp', 'none'],
  ['moe', 'none'],
]);

const PATTERN_KINDS: ReadonlyMap<string, Kind> = new Map([
  ['*', 'full'],
  ['M', 'linear'],
  ['-', 'none'],
  ['E', 'none'],
]);

interface Counts {
  full: number;
  sliding: number;
  linear: number;
  none: number;
  source: string;
}

function invalid(field: string, message: string): never {
  throw new LatencyConfigError(LatencyErrorCode.InvalidHFConfig, field, message);
}

const isObject = (v: unknown): v is Config => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A whole number >= `min` at `key`, undefined when absent or null; anything else is refused. */
function count(hf: Config, key: string, label: string, min: number): number | undefined {
  const v = hf[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
    invalid(key, `${label}: "${key}" must be a whole number >= ${min}, got ${JSON.stringify(v)}; fix the config, or pass --attention-layers full to read every layer as full attention`);
  }
  return v;
}

function tally(kinds: readonly Kind[], source: string): Counts {
  const c: Counts = { full: 0, sliding: 0, linear: 0, none: 0, source };
  for (const k of kinds) c[k]++;
  return c;
}

function fromList(list: readonly unknown[], key: string, map: ReadonlyMap<string, Kind>, numLayers: number, label: string): Counts {
  if (list.length !== numLayers) {
    invalid(key, `${label}: "${key}" lists ${list.length} layers but num_hidden_layers is ${numLayers}; fix the config, or pass --attention-layers full`);
  }
  const kinds = list.map((v, i) => {
    const kind = typeof v === 'string' ? map.get(v) : undefined;
    if (kind === undefined) {
      invalid(`${key}[${i}]`, `${label}: "${key}"[${i}] is ${JSON.stringify(v)}; known: ${[...map.keys()].map((k) => JSON.stringify(k)).join(', ')} (or pass --attention-layers full)`);
    }
    return kind;
  });
  return tally(kinds, key);
}

/** Layers i in [0, n) with (i + 1) % k == 0: the HF rule of full_attention_interval and sliding_window_pattern. */
const everyKth = (n: number, k: number): number => Math.trunc(n / k);

function layerCounts(hf: Config, L: number, label: string): Counts | undefined {
  const types = hf['layer_types'];
  if (Array.isArray(types)) return fromList(types, 'layer_types', KINDS, L, label);
  const blocks = hf['layers_block_type'];
  if (Array.isArray(blocks)) return fromList(blocks, 'layers_block_type', KINDS, L, label);
  const pattern = hf['hybrid_override_pattern'];
  if (typeof pattern === 'string') return fromList([...pattern], 'hybrid_override_pattern', PATTERN_KINDS, L, label);
  const lac = hf['linear_attn_config'];
  if (isObject(lac)) {
    const list = lac['full_attn_layers'];
    if (!Array.isArray(list) || list.length === 0 || list.length > L) {
      invalid('linear_attn_config.full_attn_layers', `${label}: "linear_attn_config" needs a "full_attn_layers" list of 1 to ${L} layer indices, got ${JSON.stringify(list) ?? 'none'}; fix the config, or pass --attention-layers full`);
    }
    return { full: list.length, sliding: 0, linear: L - list.length, none: 0, source: 'linear_attn_config.full_attn_layers' };
  }
  const interval = count(hf, 'full_attention_interval', label, 1);
  if (interval !== undefined) {
    const full = everyKth(L, interval);
    return { full, sliding: 0, linear: L - full, none: 0, source: 'full_attention_interval' };
  }
  const period = count(hf, 'attn_layer_period', label, 1);
  if (period !== undefined) {
    const offset = count(hf, 'attn_layer_offset', label, 0) ?? 0;
    if (offset >= period) invalid('attn_layer_offset', `${label}: "attn_layer_offset" (${offset}) must be below "attn_layer_period" (${period})`);
    let full = 0;
    for (let i = 0; i < L; i++) if (i % period === offset) full++;
    return { full, sliding: 0, linear: L - full, none: 0, source: 'attn_layer_period' };
  }
  if (hf['sliding_window'] === undefined || hf['sliding_window'] === null || hf['use_sliding_window'] === false) return undefined;
  const type = typeof hf['model_type'] === 'string' ? hf['model_type'] : '';
  const patternK = count(hf, 'sliding_window_pattern', label, 1);
  if (patternK !== undefined) {
    const full = everyKth(L, patternK);
    return { full, sliding: L - full, linear: 0, none: 0, source: 'sliding_window_pattern' };
  }
  if (type.startsWith('gemma2')) return { full: everyKth(L, 2), sliding: L - everyKth(L, 2), linear: 0, none: 0, source: 'sliding_window (gemma2: every other layer)' };
  if (type.startsWith('qwen')) {
    // Qwen2/Qwen3 read the window only with use_sliding_window: true, on the layers from max_window_layers on.
    if (hf['use_sliding_window'] !== true) return undefined;
    const from = Math.min(count(hf, 'max_window_layers', label, 0) ?? 0, L);
    return { full: from, sliding: L - from, linear: 0, none: 0, source: 'sliding_window + max_window_layers' };
  }
  return { full: 0, sliding: L, linear: 0, none: 0, source: 'sliding_window (every layer)' };
}

/**
 * One linear layer's state per request, in elements: the recurrent state plus the short convolution's last
 * kernel − 1 inputs, as vLLM sizes its state cache for each family; without family fields, heads·head_dim² (the
 * d_head × d_head state per head upstream's PR #1650 prices).
 */
function linearStateElements(hf: Config, label: string, heads: number, headDim: number): number {
  const n = (key: string, obj: Config = hf): number | undefined => count(obj, key, label, 1);
  const lac = hf['linear_attn_config'];
  if (isObject(lac) && n('num_heads', lac) !== undefined && n('head_dim', lac) !== undefined) {
    // Kimi Delta Attention: a head_dim × head_dim state per head; q, k and v short convolutions.
    const h = n('num_heads', lac)!;
    const d = n('head_dim', lac)!;
    const conv = (n('short_conv_kernel_size', lac) ?? 1) - 1;
    return h * d * d + conv * 3 * h * d;
  }
  const nv = n('linear_num_value_heads');
  const dk = n('linear_key_head_dim');
  const dv = n('linear_value_head_dim');
  if (nv !== undefined && dk !== undefined && dv !== undefined) {
    // Gated DeltaNet (Qwen3-Next): dk × dv per value head; the convolution runs over q, k (key heads) and v.
    const nk = n('linear_num_key_heads') ?? nv;
    const conv = (n('linear_conv_kernel_dim') ?? 1) - 1;
    return nv * dk * dv + conv * (2 * nk * dk + nv * dv);
  }
  const mh = n('mamba_num_heads');
  const mhd = n('mamba_head_dim');
  const ssm = n('ssm_state_size');
  if (mh !== undefined && mhd !== undefined && ssm !== undefined) {
    // Mamba-2 (Nemotron-H): head_dim × state per head; the convolution over x, B and C.
    const conv = (n('conv_kernel') ?? 1) - 1;
    const groups = n('n_groups') ?? 1;
    return mh * mhd * ssm + conv * (mh * mhd + 2 * groups * ssm);
  }
  const dState = n('mamba_d_state');
  const hidden = n('hidden_size');
  if (dState !== undefined && hidden !== undefined) {
    // Mamba-1 (Jamba): d_inner × d_state, d_inner = expand · hidden.
    const inner = (n('mamba_expand') ?? 2) * hidden;
    const conv = (n('mamba_d_conv') ?? 4) - 1;
    return inner * dState + conv * inner;
  }
  return heads * headDim * headDim;
}

/**
 * The hybrid layout of a flattened config.json of `numLayers` layers (`heads`, `headDim` for the default state
 * size), or undefined when every layer is full attention. Throws INVALID_HF_CONFIG naming the field when a
 * layout field is malformed.
 */
export function attentionLayoutOf(hf: Config, numLayers: number, heads: number, headDim: number, label = 'config.json'): AttentionLayout | undefined {
  const c = layerCounts(hf, numLayers, label);
  if (c === undefined || c.full === numLayers) return undefined;
  let window = 0;
  if (c.sliding > 0) {
    const w = hf['sliding_window'];
    if (typeof w !== 'number' || !Number.isInteger(w) || w < 1) {
      invalid('sliding_window', `${label}: ${c.sliding} layers are sliding-window attention (${c.source}) but "sliding_window" is ${JSON.stringify(w) ?? 'absent'}; give the window in tokens, or pass --attention-layers full`);
    }
    window = w;
  }
  if (c.full + c.sliding === 0) {
    invalid(c.source, `${label}: ${c.source} gives no attention layer (no KV cache to size); pass --attention-layers full, or --total-kv-blocks with a model that has attention layers`);
  }
  return {
    full: c.full,
    sliding: c.sliding,
    linear: c.linear,
    none: c.none,
    window,
    linearStateElements: c.linear > 0 ? linearStateElements(hf, label, heads, headDim) : 0,
    source: c.source,
  };
}

/** KV-bearing layers as the block pool counts them: the full-attention ones, or the sliding ones when none is full. */
export function kvPoolLayers(a: AttentionLayout): number {
  return a.full > 0 ? a.full : a.sliding;
}

/**
 * What a latency model needs of a hybrid layout to price a step (roofline and corrected-physics): the layer
 * counts by kind, the window, one attention layer's KV bytes per token and one request's linear-layer state in
 * bytes (each model states whether per GPU or before the division by tp).
 */
export interface HybridLayerCosts {
  readonly full: number;
  readonly sliding: number;
  readonly linear: number;
  readonly window: number;
  /** KV bytes per token of one attention layer. */
  readonly kvPerLayer: number;
  /** Linear-attention state of one request over all linear layers, in bytes. */
  readonly stateBytes: number;
}
