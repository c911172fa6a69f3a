/**
 * The evaluation contract (policy-search-design §9–§13; docs/evaluate.md): a candidate (a policy bundle) ×
 * an evaluation suite (scenarios × seeds, objectives, targets) → one JSON-able result with `combined_score`
 * in [0, 1], raw objectives, normalised per-objective scores, MAP-Elites features, per-scenario details and
 * reflection artifacts. The output keys are snake_case (they are what searches and adapters read).
 */

/** One candidate: a bundle text (YAML or JSON) plus the files it names. */
export interface Candidate {
  /** The candidate's id (bundle `metadata.id`, or the file name). */
  readonly id: string;
  /** How errors name the bundle (its file name). */
  readonly label: string;
  readonly bundle: string;
  /** Code files named by the bundle's `file:` keys, by the name used there. */
  readonly files: Readonly<Record<string, string>>;
}

/** Per-class SLO targets in ms (0 = not gated). */
export interface SloTargets {
  readonly ttftMs: number;
  readonly itlMs: number;
  readonly e2eMs: number;
}

export interface Scenario {
  readonly name: string;
  readonly description: string;
  /** `simulate()` options (camelCase CLI options, without mode, seed, policyConfig, traceLevel). */
  readonly config: Readonly<Record<string, unknown>>;
  /** Extra input files of the config (e.g. a workload spec), by name. */
  readonly files: Readonly<Record<string, string>>;
  /** Simulation seeds (the same for every candidate: common random numbers). */
  readonly seeds: readonly number[];
  /** Weight of this scenario in the combined score. */
  readonly weight: number;
  /** Per-SLO-class targets (class '' or 'default' applies to requests without a class). */
  readonly slo: Readonly<Record<string, SloTargets>>;
}

export type Direction = 'maximize' | 'minimize';

/**
 * How a raw objective becomes a score in [0, 1] (higher is better):
 * - `ratio`: maximize: clamp(v / target); minimize: clamp(target / v) (1 when v <= target);
 * - `linear`: clamp((v - worst) / (best - worst));
 * - `reference_inverse`: the reference's 1 / (1 + v / 1000) (kept for parity; it compresses differences).
 */
export type Normalization =
  | { readonly kind: 'ratio'; readonly target: number }
  | { readonly kind: 'linear'; readonly best: number; readonly worst: number }
  | { readonly kind: 'reference_inverse' };

export interface Objective {
  readonly name: string;
  /** A RawMetrics field name (see RAW_METRIC_NAMES). */
  readonly metric: string;
  readonly direction: Direction;
  readonly weight: number;
  readonly normalization: Normalization;
}

export interface Suite {
  readonly name: string;
  readonly description: string;
  /** Stage 1: a short smoke scenario that rejects broken or hopeless candidates fast. */
  readonly stage1: readonly Scenario[];
  /** Stage 2: the full suite. */
  readonly stage2: readonly Scenario[];
  readonly objectives: readonly Objective[];
  /** A candidate scoring below this in stage 1 is not run in stage 2 (its result says so). */
  readonly stage1Threshold: number;
}

/** policy-search-design §13: what makes a run reproducible. */
export interface SimulationKey {
  readonly policy_id: string;
  readonly workload_seed: number;
  readonly sim_seed: number;
  /** No timing noise is modelled: always 0. */
  readonly jitter_seed: number;
}

/** policy-search-design §9 RawMetrics, flattened to numbers (per SLO class where noted). */
export type RawMetrics = Readonly<Record<string, number>>;

export interface ScenarioResult {
  readonly scenario: string;
  readonly seed: number;
  readonly key: SimulationKey;
  readonly metrics: RawMetrics;
  /** Raw objective values. */
  readonly objectives: Readonly<Record<string, number>>;
  /** Normalised objective scores in [0, 1]. */
  readonly scores: Readonly<Record<string, number>>;
  /** This run's combined score in [0, 1]. */
  readonly score: number;
  /** Anomaly counts by type. */
  readonly anomalies: Readonly<Record<string, number>>;
  /** The run's report data (EvaluateOptions.reportData): what an HTML report draws. */
  readonly report_data?: unknown;
}

export interface EvaluationError {
  /** SANDBOX_* / POLICY_* / a config error code. */
  readonly code: string;
  readonly message: string;
}

export interface EvaluationResult {
  readonly combined_score: number;
  /** Raw objective values, weighted means over the scenario runs. */
  readonly objectives: Readonly<Record<string, number>>;
  /** Normalised objective scores in [0, 1], weighted means over the runs. */
  readonly scores: Readonly<Record<string, number>>;
  /** MAP-Elites feature values (raw continuous numbers). */
  readonly features: Readonly<Record<string, number>>;
  readonly scenarios: readonly ScenarioResult[];
  /** Reflection text; `summary` is the trace summary, `worst_decisions` the worst routing decisions. */
  readonly artifacts: Readonly<Record<string, string>>;
  readonly candidate: { readonly id: string; readonly hash: string };
  readonly suite: { readonly name: string; readonly stage: 1 | 2; readonly stages_run: readonly number[] };
  readonly blis_version: string;
  /** Present when the candidate failed: combined_score is 0 and the reason is the feedback. */
  readonly error?: EvaluationError | undefined;
}
