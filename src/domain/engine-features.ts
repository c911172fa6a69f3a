/**
 * Names of engine features shared by the flags and the deployment files: the KV-cache element types of
 * --kv-cache-dtype (vLLM's spellings; upstream PR #1646) and the speculative-decoding method labels of
 * --speculative-method (upstream PR #1538).
 */

/** --kv-cache-dtype's accepted values. */
export const KV_CACHE_DTYPES = ['auto', 'fp8', 'fp8_e4m3', 'fp8_e5m2', 'bf16', 'fp16', 'fp32'] as const;

/** KV bytes per element of a --kv-cache-dtype value; undefined for `auto` (the model's own dtype) or an unknown one. */
export function kvCacheDtypeBytes(dtype: string): number | undefined {
  switch (dtype) {
    case 'fp8':
    case 'fp8_e4m3':
    case 'fp8_e5m2':
      return 1;
    case 'bf16':
    case 'fp16':
      return 2;
    case 'fp32':
      return 4;
    default:
      return undefined;
  }
}

/** --speculative-method's labels: the first four are vLLM's method names, `draft` its draft_model. */
export const SPECULATIVE_METHODS = ['mtp', 'eagle', 'medusa', 'ngram', 'draft'] as const;
