/**
 * Distribution-workload shapes: the `--workload` presets (the reference's defaults.yaml `workloads` section),
 * the flag defaults, and the CLI validation of the distribution flags.
 *
 * Presets bypass the flag validation in the reference (their values are trusted configuration), so only
 * `--workload distribution` (and `--concurrency`) runs {@link validateDistributionParams}.
 */
import type { GaussianLengthParams } from './distribution.js';

export interface DistributionShape {
  readonly prefixTokens: number;
  readonly prompt: GaussianLengthParams;
  readonly output: GaussianLengthParams;
}

function shape(prefixTokens: number, prompt: readonly [number, number, number, number], output: readonly [number, number, number, number]): DistributionShape {
  return Object.freeze({
    prefixTokens,
    prompt: Object.freeze({ mean: prompt[0], stdev: prompt[1], min: prompt[2], max: prompt[3] }),
    output: Object.freeze({ mean: output[0], stdev: output[1], min: output[2], max: output[3] }),
  });
}

/** Flag defaults of `--prompt-tokens*`, `--output-tokens*` and `--prefix-tokens`. */
export const DEFAULT_DISTRIBUTION: DistributionShape = shape(0, [512, 256, 2, 7000], [512, 256, 2, 7000]);

export const PRESET_NAMES = ['chatbot', 'contentgen', 'summarization', 'multidoc'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

/** The reference's shipped presets (mean, stdev, min, max). multidoc has no prefix_tokens key, i.e. 0. */
export const WORKLOAD_PRESETS: Readonly<Record<PresetName, DistributionShape>> = Object.freeze({
  chatbot: shape(0, [256, 100, 2, 800], [256, 100, 1, 1024]),
  contentgen: shape(0, [1024, 150, 10, 2048], [1024, 200, 10, 2048]),
  summarization: shape(0, [4096, 500, 100, 8192], [512, 150, 10, 2048]),
  multidoc: shape(0, [10240, 1200, 500, 20480], [1536, 300, 50, 4096]),
});

export function isPresetName(name: string): name is PresetName {
  return (PRESET_NAMES as readonly string[]).includes(name);
}

/**
 * The shape for a `--workload` value other than "distribution".
 * @throws Error naming the valid choices when the preset is unknown.
 */
export function resolvePreset(name: string): DistributionShape {
  if (isPresetName(name)) return WORKLOAD_PRESETS[name];
  throw new Error(
    `--workload: undefined workload ${JSON.stringify(name)}; use "distribution" or one of (${PRESET_NAMES.join(', ')}), or pass --workload-spec`,
  );
}

/**
 * Validates the distribution flags in the reference's order and returns the first problem as a message naming
 * the flag, or null when the parameters are acceptable. The accepted set is exactly the reference's:
 * min, max >= 1; stdev >= 0; min <= max; mean within [min, max]; stdev <= max; stdev 0 or >= min.
 */
export function validateDistributionParams(prompt: GaussianLengthParams, output: GaussianLengthParams): string | null {
  const sides = [
    ['prompt', prompt],
    ['output', output],
  ] as const;
  for (const [name, p] of sides) {
    if (p.min < 1) return `--${name}-tokens-min must be >= 1, got ${p.min}`;
    if (p.max < 1) return `--${name}-tokens-max must be >= 1, got ${p.max}`;
  }
  for (const [name, p] of sides) {
    if (p.stdev < 0) return `--${name}-tokens-stdev must be >= 0, got ${p.stdev}`;
  }
  for (const [name, p] of sides) {
    if (p.min > p.max) return `--${name}-tokens-min (${p.min}) must be <= --${name}-tokens-max (${p.max})`;
  }
  for (const [name, p] of sides) {
    const range = `[--${name}-tokens-min, --${name}-tokens-max] = [${p.min}, ${p.max}]`;
    if (p.mean > p.max || p.mean < p.min) return `--${name}-tokens (${p.mean}) must lie within ${range}`;
    if (p.stdev > p.max) return `--${name}-tokens-stdev (${p.stdev}) must be <= --${name}-tokens-max (${p.max})`;
    if (p.stdev !== 0 && p.stdev < p.min) {
      return `--${name}-tokens-stdev (${p.stdev}) must be 0 or >= --${name}-tokens-min (${p.min})`;
    }
  }
  return null;
}

/** Checks of the other workload flags that `blis run` applies before synthesising a workload. */
export interface WorkloadFlagValues {
  readonly rate: number;
  readonly numRequests: number;
  readonly prefixTokens: number;
  /** `--timeout` in seconds; negative disables deadlines, 0 is rejected. */
  readonly timeoutSecs: number;
}

/**
 * Returns the first problem with the generic workload flags as a message naming the flag, or null.
 * `--rate` is only checked by rate-driven workloads (distribution and presets), so callers pass
 * `checkRate = false` for `--workload-spec` and `--concurrency` runs.
 */
export function validateWorkloadFlags(v: WorkloadFlagValues, checkRate = true): string | null {
  if (v.numRequests < 0) return `--num-requests must be >= 0, got ${v.numRequests}`;
  if (v.prefixTokens < 0) return `--prefix-tokens must be >= 0, got ${v.prefixTokens}`;
  if (checkRate && !(Number.isFinite(v.rate) && v.rate > 0)) return `--rate must be a finite value > 0, got ${v.rate}`;
  if (v.timeoutSecs === 0) return '--timeout must be positive (seconds) or negative to disable; got 0';
  return null;
}
