/**
 * The facts the engine needs from the reference's defaults.yaml: per-model GPU/TP/HF-repo defaults and the
 * global trained-physics coefficients. (The workload presets live with the workload layer.)
 *
 * Keys are lowercased HuggingFace ids, exactly as defaults.yaml spells them; the CLI lowercases `--model`
 * before looking a model up here, so lookups are exact on the lowercased name (no org stripping).
 */

export interface ModelDefaults {
  /** GPU name in the hardware catalog. */
  readonly gpu: string;
  readonly tensorParallelism: number;
  /** Case-sensitive HuggingFace repository; absent for synthetic models without a public repo. */
  readonly hfRepo?: string;
}

function h100(tp: number, hfRepo?: string): ModelDefaults {
  return hfRepo === undefined ? { gpu: 'H100', tensorParallelism: tp } : { gpu: 'H100', tensorParallelism: tp, hfRepo };
}

export const MODEL_DEFAULTS: Readonly<Record<string, ModelDefaults>> = {
  'ibm-granite/granite-3.1-8b-instruct': h100(1, 'ibm-granite/granite-3.1-8b-instruct'),
  'meta-llama/llama-3.1-8b-instruct': h100(1, 'meta-llama/Llama-3.1-8B-Instruct'),
  'meta-llama/llama-3.3-70b-instruct': h100(4, 'meta-llama/Llama-3.3-70B-Instruct'),
  'meta-llama/llama-4-maverick-17b-128e-instruct-fp8': h100(8, 'meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8'),
  'codellama/codellama-34b-instruct-hf': h100(2, 'codellama/CodeLlama-34b-Instruct-hf'),
  'meta-llama/llama-4-scout-17b-16e-instruct': h100(4, 'meta-llama/Llama-4-Scout-17B-16E-Instruct'),
  'microsoft/phi-4': h100(1, 'microsoft/phi-4'),
  'mistralai/mistral-small-24b-instruct-2501': h100(1, 'mistralai/Mistral-Small-24B-Instruct-2501'),
  'mistralai/mistral-small-3.1-24b-instruct-2503': h100(1, 'mistralai/Mistral-Small-3.1-24B-Instruct-2503'),
  'nvidia/llama-3.1-nemotron-70b-instruct-hf': h100(4, 'nvidia/Llama-3.1-Nemotron-70B-Instruct-HF'),
  // Synthetic benchmark models without HuggingFace repos: they need an explicit model config.
  'openai/gpt-oss-120b': h100(4),
  'openai/gpt-oss-20b': h100(1),
  'qwen/qwen2.5-3b-instruct': h100(1, 'Qwen/Qwen2.5-3B-Instruct'),
  'qwen/qwen3-14b': h100(1, 'Qwen/Qwen3-14B'),
  'qwen/qwen2.5-7b-instruct': h100(1, 'Qwen/Qwen2.5-7B-Instruct'),
  'redhatai/llama-3.1-nemotron-70b-instruct-hf-fp8-dynamic': h100(2, 'RedHatAI/Llama-3.1-Nemotron-70B-Instruct-HF-FP8-dynamic'),
  'redhatai/llama-3.3-70b-instruct-quantized.w4a16': h100(1, 'RedHatAI/Llama-3.3-70B-Instruct-quantized.w4a16'),
  'redhatai/llama-3.3-70b-instruct-quantized.w8a8': h100(2, 'RedHatAI/Llama-3.3-70B-Instruct-quantized.w8a8'),
  'redhatai/llama-4-scout-17b-16e-instruct-fp8-dynamic': h100(2, 'RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic'),
  'redhatai/llama-4-scout-17b-16e-instruct-quantized.w4a16': h100(1, 'RedHatAI/Llama-4-Scout-17B-16E-Instruct-quantized.w4a16'),
  'redhatai/mistral-small-3.1-24b-instruct-2503-fp8-dynamic': h100(1, 'RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-FP8-dynamic'),
  'redhatai/mistral-small-3.1-24b-instruct-2503-quantized.w4a16': h100(
    1,
    'RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-quantized.w4a16',
  ),
  'redhatai/mistral-small-3.1-24b-instruct-2503-quantized.w8a8': h100(
    1,
    'RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-quantized.w8a8',
  ),
  'redhatai/phi-4-fp8-dynamic': h100(1, 'RedHatAI/phi-4-FP8-dynamic'),
  'redhatai/phi-4-quantized.w4a16': h100(1, 'RedHatAI/phi-4-quantized.w4a16'),
  'redhatai/phi-4-quantized.w8a8': h100(1, 'RedHatAI/phi-4-quantized.w8a8'),
  'redhatai/qwen2.5-7b-instruct-fp8-dynamic': h100(1, 'RedHatAI/Qwen2.5-7B-Instruct-FP8-dynamic'),
  'redhatai/qwen2.5-7b-instruct-quantized.w4a16': h100(1, 'RedHatAI/Qwen2.5-7B-Instruct-quantized.w4a16'),
  'redhatai/qwen2.5-7b-instruct-quantized.w8a8': h100(1, 'RedHatAI/Qwen2.5-7B-Instruct-quantized.w8a8'),
  'redhatai/smollm3-3b-fp8-dynamic': h100(1, 'RedHatAI/SmolLM3-3B-FP8-dynamic'),
};

/**
 * GPU/TP/repo defaults for a model name (lowercased before lookup, as the reference does). A name without an
 * `org/` prefix finds the one model of that name (`llama-3.1-8b-instruct` is `meta-llama/llama-3.1-8b-instruct`);
 * none when no model or several models (of different organisations) have it.
 */
export function findModelDefaults(modelName: string): ModelDefaults | undefined {
  const key = modelName.toLowerCase();
  if (Object.hasOwn(MODEL_DEFAULTS, key)) return MODEL_DEFAULTS[key];
  if (key.includes('/') || key === '') return undefined;
  const matches = Object.keys(MODEL_DEFAULTS).filter((k) => k.slice(k.indexOf('/') + 1) === key);
  return matches.length === 1 ? MODEL_DEFAULTS[matches[0] as string] : undefined;
}

/**
 * Global trained-physics coefficients (defaults.yaml `trained_physics_coefficients`, fitted in the
 * reference's "iter29"). There are no per-model coefficients.
 *
 * α: [queueing overhead µs, post-decode overhead µs, per-output-token overhead µs].
 * β: [prefill compute, decode compute, weight load, TP comm, per-layer µs, per-request µs, per-step µs,
 *     per-interleaved-MoE-layer µs, prefill KV, decode KV, MoE dispatch].
 */
export const TRAINED_PHYSICS_COEFFICIENTS = {
  alpha: [15563.199579, 777.3455, 45.907545],
  beta: [0.152128, 0.0, 1.36252915, 0.752037, 32.09546717, 4.41684444, 126.024825, 481.8613888, 0.0, 1.94710771, 0.752037],
} as const satisfies { alpha: readonly number[]; beta: readonly number[] };
