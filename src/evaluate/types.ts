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
  /** Search seeds: the runs that score a candidate (the same for every candidate: common random numbers). */
  readonly seeds: readonly number[];
  /**
   * Held-out seeds, disjoint from `seeds`: `--stage validate` scores on them, and `blis suites check` draws its seed
   * sets from them (extended by a fixed rule when short; suites.ts `seedsFor`).
   */
  readonly holdoutSeeds: readonly number[];
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
  /**
   * Latency objectives only: with fewer completed requests than this (in the class the objective covers) the
   * objective scores 0, its worst, and has no raw value (default 1).
   */
  readonly minCompleted?: number;
}

/**
 * A bound on one metric per run: `min` (value >= bound) or `max` (value <= bound); relative to the baseline, the
 * bound is `value` times the baseline's value of the metric on the same scenario and seed. A violated constraint
 * multiplies the run's score by 1 - its relative shortfall (fitness.ts checkConstraints).
 */
export interface Constraint {
  readonly name: string;
  readonly metric: string;
  readonly kind: 'min' | 'max';
  readonly value: number;
  readonly relativeToBaseline: boolean;
}

/** A policy a suite names: its baseline, a known-good policy, or a known-bad or cheating one. */
export interface KnownPolicy {
  readonly id: string;
  readonly description: string;
  /** `bad` (a poor but honest policy) or `cheating` (one that games a naive score: reject-all, admit a few...). */
  readonly kind: 'baseline' | 'good' | 'bad' | 'cheating';
  /** A policy bundle (YAML or JSON text); `{}` is the suite's defaults. */
  readonly bundle: string;
}

/** The control points a policy can set (policy/view.ts CONTROL_POINTS). */
export type SuiteControlPoint = 'admission' | 'priority' | 'routing' | 'scheduler' | 'autoscale' | 'disaggregation' | 'encode';

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
  /** Bounds every run must meet; a violation scales the run's score down (fitness.ts checkConstraints). */
  readonly constraints: readonly Constraint[];
  /**
   * Policy options (simulate() names, e.g. `routingPolicy`) for control points the candidate leaves unset: a
   * candidate that sets the control point replaces them. Control points a scenario's own `config` sets are fixed:
   * a candidate that sets one of those is refused (`SUITE_FIXED_CONTROL_POINT`).
   */
  readonly defaults: Readonly<Record<string, unknown>>;
  /** What "the default" means here: scores carry their paired difference to it. null: no baseline. */
  readonly baseline: KnownPolicy | null;
  /** Policies that must beat the baseline (`blis suites check`). */
  readonly knownGood: readonly KnownPolicy[];
  /** Known-bad and cheating policies that must score below the baseline (`blis suites check`). */
  readonly knownBad: readonly KnownPolicy[];
  /** The offered load relative to the capacity the suite's author measured, and how it was measured. */
  readonly load: { readonly level: number; readonly note: string } | null;
}

/** 1: the smoke stage; 2: stage 1 then the full suite on the search seeds; validate: the full suite on the held-out seeds. */
export type Stage = 1 | 2 | 'validate';

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

/** One constraint's verdict on one run (fitness.ts checkConstraints). */
export interface ConstraintCheck {
  readonly name: string;
  /** The run's value (null: none, e.g. a latency with no completed request, which violates the constraint). */
  readonly value: number | null;
  /** The bound the value was held to (the baseline's value times the ratio for a relative constraint). */
  readonly bound: number;
  readonly satisfied: boolean;
  /** The run's score is multiplied by this: 1 - the relative shortfall. */
  readonly factor: number;
}

export interface ScenarioResult {
  readonly scenario: string;
  readonly seed: number;
  readonly key: SimulationKey;
  readonly metrics: RawMetrics;
  /** Raw objective values. */
  readonly objectives: Readonly<Record<string, number>>;
  /** Normalised objective scores in [0, 1]. */
  readonly scores: Readonly<Record<string, number>>;
  /** This run's combined score in [0, 1]: `objective_score` times `constraint_factor`. */
  readonly score: number;
  /** The weighted mean of the objective scores, before constraints. */
  readonly objective_score: number;
  /** The product of the constraints' factors (1: every constraint met). */
  readonly constraint_factor: number;
  /** Each constraint's verdict on this run. */
  readonly constraints: readonly ConstraintCheck[];
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

/** A mean over runs with its standard error and 95% confidence interval (docs/evaluate.md "Reading the noise figures"). */
export interface Estimate {
  readonly mean: number;
  /** Standard error over seeds (null when a scenario has a single seed: no spread to measure). */
  readonly se: number | null;
  /** 95% confidence interval (Student's t on the seeds' degrees of freedom); null without a standard error. */
  readonly ci95: readonly [number, number] | null;
  /** Runs the mean is over. */
  readonly runs: number;
}

/** The candidate against the suite's baseline on the same runs (same scenarios and seeds: common random numbers). */
export interface BaselineComparison {
  readonly id: string;
  readonly combined_score: number;
  /** The paired difference candidate - baseline of the run scores. */
  readonly difference: Estimate;
  /** Runs the candidate won, lost and tied against the baseline. */
  readonly wins: number;
  readonly losses: number;
  readonly ties: number;
}

export interface EvaluationResult {
  readonly combined_score: number;
  /** Standard error of `combined_score` over seeds (null when some scenario ran one seed, or the candidate failed). */
  readonly combined_score_se: number | null;
  /** 95% confidence interval of `combined_score` (null with no standard error). */
  readonly combined_score_ci95: readonly [number, number] | null;
  /** The paired comparison with the suite's baseline (absent without a baseline, for the baseline itself, or on failure). */
  readonly baseline?: BaselineComparison | undefined;
  /** Per constraint: the runs that violated it and the mean factor it applied. */
  readonly constraints: Readonly<Record<string, { readonly violated_runs: number; readonly mean_factor: number }>>;
  /** Raw objective values, weighted means over the scenario runs that have one (a failed candidate has none). */
  readonly objectives: Readonly<Record<string, number>>;
  /** Normalised objective scores in [0, 1], weighted means over the runs. */
  readonly scores: Readonly<Record<string, number>>;
  /** MAP-Elites feature values (raw continuous numbers). */
  readonly features: Readonly<Record<string, number>>;
  readonly scenarios: readonly ScenarioResult[];
  /** Reflection text; `summary` is the trace summary, `worst_decisions` the worst routing decisions. */
  readonly artifacts: Readonly<Record<string, string>>;
  readonly candidate: { readonly id: string; readonly hash: string };
  readonly suite: { readonly name: string; readonly stage: Stage; readonly stages_run: readonly (number | 'validate')[] };
  readonly blis_version: string;
  /** Present when the candidate failed: combined_score is 0 and the reason is the feedback. */
  readonly error?: EvaluationError | undefined;
}
