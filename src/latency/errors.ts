/**
 * Typed errors of the latency layer (model construction, HF config parsing, KV capacity, max-model-len).
 *
 * One class with a stable `code` lets the CLI map failures to messages and exit codes without matching on
 * message text; `field` names the offending input (a ModelConfig/HardwareConfig field, a config.json key, or
 * an option such as `tp`) so the message can point at it.
 */
import { BlisError } from '../domain/errors.js';
export const LatencyErrorCode = {
  /** Alpha/beta coefficient list too short, or an entry that is NaN, infinite or negative. */
  InvalidCoefficients: 'INVALID_COEFFICIENTS',
  /** A model-architecture fact the latency model needs is missing or out of range. */
  InvalidModelConfig: 'INVALID_MODEL_CONFIG',
  /** A GPU fact (peak FLOPs, bandwidth, MFU, memory) is missing or out of range. */
  InvalidHardwareConfig: 'INVALID_HARDWARE_CONFIG',
  /** TP/DP are invalid for this model (non-positive, heads not divisible, DP on a dense model). */
  InvalidParallelism: 'INVALID_PARALLELISM',
  UnknownMoECommBackend: 'UNKNOWN_MOE_COMM_BACKEND',
  /** A HuggingFace config.json object is malformed. */
  InvalidHFConfig: 'INVALID_HF_CONFIG',
  /** The config looks MoE but has no total expert count, so weights cannot be sized. */
  MoEExpertCountMissing: 'MOE_EXPERT_COUNT_MISSING',
  /** KV auto-capacity inputs are invalid (block size, utilization, dims, activation). */
  InvalidKVCapacityInput: 'INVALID_KV_CAPACITY_INPUT',
  /** Weights + overheads do not fit in the GPUs' memory at this TP. */
  InsufficientGPUMemory: 'INSUFFICIENT_GPU_MEMORY',
  InvalidMaxModelLen: 'INVALID_MAX_MODEL_LEN',
} as const;
export type LatencyErrorCode = (typeof LatencyErrorCode)[keyof typeof LatencyErrorCode];

export class LatencyConfigError extends BlisError {
  declare readonly code: LatencyErrorCode;
  /** The offending field or option, e.g. `num_attention_heads`, `TFlopsPeak`, `beta[3]`, `tp`. */
  declare readonly field: string;

  constructor(code: LatencyErrorCode, field: string, message: string) {
    super(code, message, { field });
    this.name = 'LatencyConfigError';
  }
}

/** True for a finite number > 0 (rejects NaN, ±Infinity, 0 and negatives). */
export function isPositiveFinite(v: number): boolean {
  return Number.isFinite(v) && v > 0;
}

/**
 * Validates a coefficient list the way the reference does for every backend: each entry finite and >= 0.
 * `name` is the user-facing list name (`alpha` / `beta`).
 */
export function validateCoefficients(name: string, coeffs: readonly number[], minLength: number, backend: string): void {
  if (coeffs.length < minLength) {
    throw new LatencyConfigError(
      LatencyErrorCode.InvalidCoefficients,
      name,
      `${backend}: ${name} coefficients need at least ${minLength} values, got ${coeffs.length}; ` +
        `pass --${name}-coeffs with ${minLength} or more comma-separated numbers`,
    );
  }
  coeffs.forEach((c, i) => {
    if (!Number.isFinite(c) || c < 0) {
      throw new LatencyConfigError(
        LatencyErrorCode.InvalidCoefficients,
        `${name}[${i}]`,
        `${backend}: ${name}[${i}] must be a finite number >= 0, got ${c}; fix that entry of --${name}-coeffs`,
      );
    }
  });
}
