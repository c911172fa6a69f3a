/**
 * Engine generations as documented profiles (`--engine-profile`, corrected-physics only): how the serving
 * engine forms its steps and what its CPU side costs around the GPU work. The GPU physics is the same in every
 * profile; only the software overheads and the step formation differ. docs/fidelity.md ("Engine profiles")
 * gives the public sources of each figure.
 *
 * - `vllm-v1`: vLLM's V1 engine (v0.8 onwards; async scheduling, a separate front-end process, chunked
 *   prefill always on). The overheads are corrected-physics' shipped defaults, fitted on the public v0.15.1
 *   H100 runs (docs/fidelity.md).
 * - `vllm-v0`: vLLM's V0 engine (v0.4–v0.6 era, 2024; no chunked prefill by default, so prefill-only steps
 *   stall the decodes; scheduler, input preparation, sampler and output processing run on the critical path
 *   between steps in the same Python process). Derived from public measurements, not fitted:
 *     - vLLM RFC #6854 (multi-step scheduling, 2024-07-26): the CPU work between two decode steps leaves the
 *       GPU idle 5–13 ms; its traces show about 4 ms of GPU bubble per decode step;
 *     - vLLM issue #6801 (performance roadmap, comment of 2024-08-08): at a batch of 200 sequences the
 *       sampler, input preparation, output processing and scheduler together take about 20 ms per step;
 *     - the vLLM v0.6.0 blog post (2024-09-05): on Llama 3 8B / one H100, v0.5.3 spent 62 % of its time
 *       outside the GPU (33 % HTTP server, 29 % scheduling and input preparation).
 *   A line through (small batch, 4 ms) and (200 sequences, 20 ms) gives 4,000 µs per step plus
 *   (20,000 − 4,000) / 200 = 80 µs per scheduled sequence: 8–14 ms at 50–125 running sequences, which is
 *   also the per-step overhead the issue measured on A100 (a check, not an input). The per-request front end
 *   keeps V1's figure (no public per-request V0 measurement was found).
 */
import type { CorrectedPhysicsCoefficient } from './corrected-physics.js';

/** Step formation of an engine profile: the values of `--scheduling-mode` it implies. */
export type EngineStepFormation = 'async' | 'prefill-first';

export interface EngineProfile {
  /** One line for `--help` and `--log info`. */
  readonly description: string;
  /** The scheduling mode the engine runs (an explicit `--scheduling-mode` overrides it). */
  readonly schedulingMode: EngineStepFormation;
  /**
   * One attention call per step over prefill and decode tokens alike (V1: vllm/v1/attention/backends/flash_attn.py
   * calls `flash_attn_varlen_func` once for the whole batch), so a decode beside a prefill pays the kernel's query
   * tile (GpuPhysics.mixedDecodeTileRows); V0's backends call the prefill and the decode kernels apart
   * (vllm/attention/backends/flash_attn.py: `prefill_meta` through `flash_attn_varlen_func`, `decode_meta` through
   * `flash_attn_with_kvcache`).
   */
  readonly unifiedAttention: boolean;
  /** corrected-physics software overheads in µs (a fitted `--latency-profile` overrides them). */
  readonly overheads: Readonly<Record<Extract<CorrectedPhysicsCoefficient, 'step_us' | 'request_us' | 'frontend_us'>, number>>;
}

export const ENGINE_PROFILES = {
  'vllm-v1': {
    description: 'vLLM V1 (v0.8+): async scheduling, chunked prefill; 838 µs per step + 8 µs per scheduled sequence, 9,030 µs front end',
    schedulingMode: 'async',
    unifiedAttention: true,
    overheads: { step_us: 838, request_us: 8, frontend_us: 9030 },
  },
  'vllm-v0': {
    description: 'vLLM V0 (2024, v0.4–v0.6): prefill-only steps, synchronous CPU work between steps; 4,000 µs per step + 80 µs per scheduled sequence, 9,030 µs front end',
    schedulingMode: 'prefill-first',
    unifiedAttention: false,
    overheads: { step_us: 4000, request_us: 80, frontend_us: 9030 },
  },
} as const satisfies Record<string, EngineProfile>;

export type EngineProfileName = keyof typeof ENGINE_PROFILES;
export const ENGINE_PROFILE_NAMES = Object.keys(ENGINE_PROFILES) as readonly EngineProfileName[];

export function isEngineProfileName(name: string): name is EngineProfileName {
  return Object.hasOwn(ENGINE_PROFILES, name);
}
