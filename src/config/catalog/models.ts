/**
 * Embedded model catalog: the architecture facts of the models the reference ships under `model_configs/`,
 * kept in HuggingFace config.json form (only the keys the config parser reads) so that a catalog model and
 * a user-supplied config.json go through the same parser.
 *
 * Keys are the reference's folder names. A `--model` value finds its entry the way the reference finds its
 * folder: lowercase it and drop the `org/` prefix (see {@link findCatalogModel}).
 */

/** A rope_scaling object as config.json states it. */
export type HFRopeScaling = Readonly<Record<string, number | string | null>>;

export interface HFQuantizationConfig {
  readonly quant_method?: string;
  readonly bits?: number | string;
  readonly config_groups?: Readonly<Record<string, { readonly weights?: { readonly num_bits?: number } }>>;
}

/** config.json keys read by the parser (all optional: configs use different subsets and aliases). */
export interface HFTextConfigFields {
  readonly model_type?: string;
  readonly num_hidden_layers?: number;
  readonly hidden_size?: number;
  readonly num_attention_heads?: number;
  readonly num_key_value_heads?: number | null;
  readonly num_kv_heads?: number;
  readonly multi_query_group_num?: number;
  readonly head_dim?: number;
  readonly vocab_size?: number;
  readonly torch_dtype?: string;
  readonly dtype?: string;
  readonly hidden_act?: string;
  readonly intermediate_size?: number;
  readonly ffn_hidden_size?: number;
  readonly intermediate_size_mlp?: number;
  readonly num_experts?: number;
  readonly moe_num_experts?: number;
  readonly n_routed_experts?: number;
  readonly num_local_experts?: number;
  readonly num_routed_experts?: number;
  readonly num_experts_per_tok?: number;
  readonly moe_intermediate_size?: number;
  readonly shared_expert_intermediate_size?: number;
  readonly n_shared_experts?: number;
  readonly interleave_moe_layer_step?: number;
  readonly kv_lora_rank?: number;
  readonly qk_rope_head_dim?: number;
  readonly first_k_dense_replace?: number;
  readonly tie_word_embeddings?: boolean;
  readonly max_position_embeddings?: number;
  readonly rope_scaling?: HFRopeScaling | null;
  readonly quantization_config?: HFQuantizationConfig;
}

/** A config.json; multimodal wrappers nest the language model's keys under `text_config`. */
export interface HFConfigFields extends HFTextConfigFields {
  readonly text_config?: HFTextConfigFields;
}

export interface CatalogModel {
  /** HuggingFace repository id (case-sensitive), null where the catalog has no confirmed public repo. */
  readonly hfRepo: string | null;
  readonly config: HFConfigFields;
}

export const MODEL_CATALOG = {
  'codellama-34b-instruct-hf': {
    hfRepo: 'codellama/CodeLlama-34b-Instruct-hf',
    config: {
      model_type: 'llama',
      num_hidden_layers: 48,
      hidden_size: 8192,
      num_attention_heads: 64,
      num_key_value_heads: 8,
      vocab_size: 32000,
      torch_dtype: 'bfloat16',
      hidden_act: 'silu',
      intermediate_size: 22016,
      tie_word_embeddings: false,
      max_position_embeddings: 16384,
      rope_scaling: null,
    },
  },
  'deepseek-v2-lite': {
    hfRepo: 'deepseek-ai/DeepSeek-V2-Lite',
    config: {
      model_type: 'deepseek_v2',
      num_hidden_layers: 27,
      hidden_size: 2048,
      num_attention_heads: 16,
      num_key_value_heads: 16,
      vocab_size: 102400,
      torch_dtype: 'bfloat16',
      hidden_act: 'silu',
      intermediate_size: 10944,
      n_routed_experts: 64,
      num_experts_per_tok: 6,
      moe_intermediate_size: 1408,
      n_shared_experts: 2,
      kv_lora_rank: 512,
      qk_rope_head_dim: 64,
      first_k_dense_replace: 1,
      tie_word_embeddings: false,
      max_position_embeddings: 163840,
      rope_scaling: {
        beta_fast: 32,
        beta_slow: 1,
        factor: 40,
        mscale: 0.707,
        mscale_all_dim: 0.707,
        original_max_position_embeddings: 4096,
        type: 'yarn',
      },
    },
  },
  'glm-5.2-fp8': {
    hfRepo: null,
    config: {
      model_type: 'glm_moe_dsa',
      num_hidden_layers: 78,
      hidden_size: 6144,
      num_attention_heads: 64,
      num_key_value_heads: 64,
      head_dim: 192,
      vocab_size: 154880,
      dtype: 'bfloat16',
      hidden_act: 'silu',
      intermediate_size: 12288,
      n_routed_experts: 256,
      num_experts_per_tok: 8,
      moe_intermediate_size: 2048,
      n_shared_experts: 1,
      kv_lora_rank: 512,
      qk_rope_head_dim: 64,
      first_k_dense_replace: 3,
      tie_word_embeddings: false,
      max_position_embeddings: 1048576,
      quantization_config: {
        quant_method: 'fp8',
      },
    },
  },
  'llama-2-7b-hf': {
    hfRepo: 'meta-llama/Llama-2-7b-hf',
    config: {
      model_type: 'llama',
      num_hidden_layers: 32,
      hidden_size: 4096,
      num_attention_heads: 32,
      num_key_value_heads: 32,
      vocab_size: 32000,
      torch_dtype: 'float16',
      hidden_act: 'silu',
      intermediate_size: 11008,
      tie_word_embeddings: false,
      max_position_embeddings: 4096,
      rope_scaling: null,
    },
  },
  // Not in the reference's bundled model_configs; facts from the public meta-llama/Llama-2-70b-hf config.json
  // (GQA with 8 KV heads, 4K context). Needed for the real-vLLM fidelity runs.
  'llama-2-70b-hf': {
    hfRepo: 'meta-llama/Llama-2-70b-hf',
    config: {
      model_type: 'llama',
      num_hidden_layers: 80,
      hidden_size: 8192,
      num_attention_heads: 64,
      num_key_value_heads: 8,
      vocab_size: 32000,
      torch_dtype: 'float16',
      hidden_act: 'silu',
      intermediate_size: 28672,
      tie_word_embeddings: false,
      max_position_embeddings: 4096,
      rope_scaling: null,
    },
  },
  'llama-3.1-70b-instruct': {
    hfRepo: 'meta-llama/Llama-3.1-70B-Instruct',
    config: {
      model_type: 'llama',
      num_hidden_layers: 80,
      hidden_size: 8192,
      num_attention_heads: 64,
      num_key_value_heads: 8,
      vocab_size: 128256,
      torch_dtype: 'bfloat16',
      hidden_act: 'silu',
      intermediate_size: 28672,
      tie_word_embeddings: false,
      max_position_embeddings: 131072,
      rope_scaling: {
        factor: 8,
        low_freq_factor: 1,
        high_freq_factor: 4,
        original_max_position_embeddings: 8192,
        rope_type: 'llama3',
      },
    },
  },
  'llama-3.1-8b-instruct': {
    hfRepo: 'meta-llama/Llama-3.1-8B-Instruct',
    config: {
      model_type: 'llama',
      num_hidden_layers: 32,
      hidden_size: 4096,
      num_attention_heads: 32,
      num_key_value_heads: 8,
      vocab_size: 128256,
      torch_dtype: 'bfloat16',
      hidden_act: 'silu',
      intermediate_size: 14336,
      tie_word_embeddings: false,
      max_position_embeddings: 131072,
    },
  },
  'llama-4-scout-17b-16e-instruct-fp8-dynamic': {
    hfRepo: 'RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic',
    config: {
      model_type: 'llama4',
      torch_dtype: 'bfloat16',
      quantization_config: {
        quant_method: 'compressed-tensors',
        config_groups: {
          group_0: {
            weights: {
              num_bits: 8,
            },
          },
        },
      },
      text_config: {
        model_type: 'llama4_text',
        num_hidden_layers: 48,
        hidden_size: 5120,
        num_attention_heads: 40,
        num_key_value_heads: 8,
        head_dim: 128,
        vocab_size: 202048,
        torch_dtype: 'bfloat16',
        hidden_act: 'silu',
        intermediate_size: 8192,
        intermediate_size_mlp: 16384,
        num_local_experts: 16,
        num_experts_per_tok: 1,
        interleave_moe_layer_step: 1,
        max_position_embeddings: 10485760,
        rope_scaling: {
          factor: 16,
          high_freq_factor: 1,
          low_freq_factor: 1,
          original_max_position_embeddings: 8192,
          rope_type: 'llama3',
        },
      },
    },
  },
  'mistral-nemo-instruct-2407': {
    hfRepo: 'mistralai/Mistral-Nemo-Instruct-2407',
    config: {
      model_type: 'mistral',
      num_hidden_layers: 40,
      hidden_size: 5120,
      num_attention_heads: 32,
      num_key_value_heads: 8,
      head_dim: 128,
      vocab_size: 131072,
      torch_dtype: 'bfloat16',
      hidden_act: 'silu',
      intermediate_size: 14336,
      tie_word_embeddings: false,
      max_position_embeddings: 131072,
    },
  },
  'mixtral-8x7b-v0.1': {
    hfRepo: 'mistralai/Mixtral-8x7B-v0.1',
    config: {
      model_type: 'mixtral',
      num_hidden_layers: 32,
      hidden_size: 4096,
      num_attention_heads: 32,
      num_key_value_heads: 8,
      vocab_size: 32000,
      torch_dtype: 'bfloat16',
      hidden_act: 'silu',
      intermediate_size: 14336,
      num_local_experts: 8,
      num_experts_per_tok: 2,
      tie_word_embeddings: false,
      max_position_embeddings: 32768,
    },
  },
  'qwen2.5-7b-instruct': {
    hfRepo: 'Qwen/Qwen2.5-7B-Instruct',
    config: {
      model_type: 'qwen2',
      num_hidden_layers: 28,
      hidden_size: 3584,
      num_attention_heads: 28,
      num_key_value_heads: 4,
      vocab_size: 152064,
      torch_dtype: 'bfloat16',
      hidden_act: 'silu',
      intermediate_size: 18944,
      tie_word_embeddings: false,
      max_position_embeddings: 32768,
    },
  },
  'qwen3-14b': {
    hfRepo: 'Qwen/Qwen3-14B',
    config: {
      model_type: 'qwen3',
      num_hidden_layers: 40,
      hidden_size: 5120,
      num_attention_heads: 40,
      num_key_value_heads: 8,
      head_dim: 128,
      vocab_size: 151936,
      torch_dtype: 'bfloat16',
      hidden_act: 'silu',
      intermediate_size: 17408,
      tie_word_embeddings: false,
      max_position_embeddings: 40960,
      rope_scaling: null,
    },
  },
  'qwen3-30b-a3b': {
    hfRepo: 'Qwen/Qwen3-30B-A3B',
    config: {
      model_type: 'qwen3_moe',
      num_hidden_layers: 48,
      hidden_size: 2048,
      num_attention_heads: 32,
      num_key_value_heads: 4,
      head_dim: 128,
      vocab_size: 151936,
      torch_dtype: 'bfloat16',
      hidden_act: 'silu',
      intermediate_size: 6144,
      num_experts: 128,
      num_experts_per_tok: 8,
      moe_intermediate_size: 768,
      tie_word_embeddings: false,
      max_position_embeddings: 40960,
      rope_scaling: null,
    },
  },
  'yi-34b': {
    hfRepo: '01-ai/Yi-34B',
    config: {
      model_type: 'llama',
      num_hidden_layers: 60,
      hidden_size: 7168,
      num_attention_heads: 56,
      num_key_value_heads: 8,
      vocab_size: 64000,
      torch_dtype: 'bfloat16',
      hidden_act: 'silu',
      intermediate_size: 20480,
      tie_word_embeddings: false,
      max_position_embeddings: 4096,
      rope_scaling: null,
    },
  },
} as const satisfies Record<string, CatalogModel>;

export type CatalogModelName = keyof typeof MODEL_CATALOG;

/** The catalog key a model name resolves to: lowercased, with any `org/` prefix removed. */
export function catalogKeyFor(modelName: string): string {
  const lower = modelName.toLowerCase();
  const slash = lower.indexOf('/');
  return slash >= 0 ? lower.slice(slash + 1) : lower;
}

/** The catalog entry for a `--model` value (e.g. `meta-llama/Llama-3.1-8B-Instruct`), or undefined. */
export function findCatalogModel(modelName: string): CatalogModel | undefined {
  const key = catalogKeyFor(modelName);
  return Object.hasOwn(MODEL_CATALOG, key) ? MODEL_CATALOG[key as CatalogModelName] : undefined;
}

/** Lowercased full HuggingFace ids of the catalog models (the ids `--model` is usually given as). */
export const CATALOG_HF_IDS: ReadonlyMap<string, CatalogModelName> = new Map(
  (Object.entries(MODEL_CATALOG) as Array<[CatalogModelName, CatalogModel]>)
    .filter(([, m]) => m.hfRepo !== null)
    .map(([name, m]) => [m.hfRepo!.toLowerCase(), name]),
);
