/**
 * The batch former's configuration and per-step outcome (batch-formation.ts and the classes under it): the
 * scheduling modes, the limits a step is formed within, and what a formed step reports back to the instance.
 */
import type { Request } from '../domain/request.js';
import type { PreemptionPolicy } from './scheduler.js';
import type { SpeculativeConfig } from './speculative.js';

/**
 * How the vLLM scheduler forms steps:
 * - `sync` (the reference): a request enqueued before a step starts can join it;
 * - `async` (vLLM V1's default async scheduling): step k+1 is planned while step k runs, so a request enqueued
 *   after step k started first joins step k+2;
 * - `prefill-first` (vLLM V0 without chunked prefill): a step with waiting prompts runs only prefills, and
 *   running decodes stall until no prompt can be admitted.
 */
export type SchedulingMode = 'sync' | 'async' | 'prefill-first';
export const SCHEDULING_MODES: readonly SchedulingMode[] = ['sync', 'async', 'prefill-first'];

export interface BatchLimits {
  /** Default `sync`. */
  readonly schedulingMode?: SchedulingMode;
  readonly maxNumSeqs: number;
  readonly maxNumBatchedTokens: number;
  /** 0 = disabled. */
  readonly longPrefillTokenThreshold: number;
  /** 0 = unlimited. */
  readonly maxModelLen: number;
  /**
   * vLLM's `scheduler_reserve_full_isl` (vLLM PR #37307; on by default from v0.19): a waiting or preempted request
   * is admitted only when the KV blocks for its whole known sequence (prompt plus the outputs it already produced,
   * less its prefix-cache hits) are free now, not just its first chunk's. Default false: admission on the first
   * chunk (the reference, and vLLM before 0.19).
   */
  readonly reserveFullIsl?: boolean;
  /**
   * vLLM's automatic prefix caching. false: admission finds no cached blocks (every prompt, and every
   * re-admitted preempted request, is prefilled in full), as vLLM with `--no-enable-prefix-caching` (V0's
   * default). Default true.
   */
  readonly prefixCaching?: boolean;
  readonly preemptionPolicy: PreemptionPolicy;
  /** --semantics corrected (docs/reference-differences.md E-rows); read once at construction. Default false. */
  readonly corrected?: boolean;
  /** Speculative decoding (speculative.ts); absent/null = off (one token per decode step). */
  readonly speculative?: SpeculativeConfig | null;
  /**
   * Recompute preemption as vLLM does it (reference-differences E13; on under --semantics corrected and with
   * the corrected-physics latency model): a preempted request keeps the tokens it produced, TTFT and ITLs, and
   * is re-admitted to re-prefill its prompt and those outputs as one chunked prefill, re-emitting none of them
   * (P/D decode halves excepted: preemption.ts).
   * Default false: the reference's restart from scratch, regenerating the outputs one decode step each.
   */
  readonly reprefillPreemption?: boolean;
}

export interface BatchOutcome {
  /** Requests admitted from the wait queue this step, in admission order. */
  readonly newlyScheduled: Request[];
  preemptions: number;
  /** The preempted requests of this step, in preemption order. */
  readonly victims: Request[];
  /**
   * A request that preempted itself for tokens ending past the whole cache: it restarts from scratch and comes
   * back to the same position, so it can never finish (null = none this step).
   */
  neverFits: Request | null;
}
