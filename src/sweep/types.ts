/**
 * A sweep: one base configuration (the keys `simulate()` takes) crossed with axes (a grid) or random samples,
 * and optionally seeds → one simulation per point → one row per point. The unit of work that runs locally or
 * on a queue is a {@link JobSpec}: one simulation or one evaluation, content-addressed.
 */
import type { Candidate, EvaluateOptions, Suite } from '../evaluate/index.js';

/** A configuration value as a sweep file gives it (options of kind `floats` are lists of numbers). */
export type ParamValue = string | number | boolean | readonly number[];

export interface SweepObjective {
  /** A metric name of the rows (a flattened `simulation_metrics` key, e.g. `ttft_p99_ms`). */
  readonly metric: string;
  readonly direction: 'minimize' | 'maximize';
}

/** One point: its parameters (the axes' or samples' values, plus `seed`) and the whole configuration. */
export interface SweepPoint {
  readonly params: Readonly<Record<string, ParamValue>>;
  /** A `simulate()` config: `mode`, the options, and `files` holding every file the options name. */
  readonly config: Readonly<Record<string, unknown>>;
}

export interface SweepPlan {
  /** Points in the sweep's order (the grid's last axis varies fastest; seeds innermost). */
  readonly points: readonly SweepPoint[];
  /** Parameter names in column order. */
  readonly params: readonly string[];
  readonly objectives: readonly SweepObjective[];
  /** True when the objectives were not stated in the file (the defaults apply). */
  readonly defaultObjectives: boolean;
}

/** A failed point or job: a stable code and a one-line reason. */
export interface JobError {
  readonly code: string;
  readonly message: string;
}

/** What one simulation job yields: the flattened metrics, or the configuration's error (both are results). */
export type PointResult = { readonly metrics: Readonly<Record<string, number | null>> } | { readonly error: JobError };

export interface SimulationJob {
  readonly kind: 'simulate';
  /** blis-ts version that defines the result (part of the job's content address). */
  readonly version: string;
  readonly config: Readonly<Record<string, unknown>>;
  /**
   * The point's in-run wall-clock budget (ms) when it has fast-engine code and its config sets no
   * policyWallClockS (`blis sweep --timeout-s`); absent: the default. Not part of the job's content address.
   */
  readonly wallClockMs?: number;
}

export interface EvaluationJob {
  readonly kind: 'evaluate';
  readonly version: string;
  readonly candidate: Candidate;
  readonly suite: Suite;
  readonly opts: EvaluateOptions;
}

export type JobSpec = SimulationJob | EvaluationJob;

/**
 * A job's end: its result (a {@link PointResult} or an EvaluationResult, JSON-round-tripped so local and queued
 * execution give the same bytes), or a failure that is not a fact about the job (its worker died, a budget,
 * too many stalls) and is never cached.
 */
export type JobOutcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: JobError };

/** One output row. */
export interface SweepRow {
  readonly params: Readonly<Record<string, ParamValue>>;
  readonly metrics: Readonly<Record<string, number | null>>;
  readonly error?: JobError;
}

/**
 * Runs jobs somewhere (in process, on a thread pool, on a queue) and reports each as it ends (`cached`: its
 * result existed before this run). Rejects with the signal's reason when `signal` aborts.
 */
export interface JobRunner {
  /** Resolves with one outcome per job, in the jobs' order. */
  runAll(jobs: readonly JobSpec[], onDone?: (index: number, outcome: JobOutcome, cached: boolean) => void, signal?: AbortSignal): Promise<JobOutcome[]>;
  close(): Promise<void>;
}
