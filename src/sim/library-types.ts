/**
 * The library's config and result types, derived at the type level from the one option table (./options.ts):
 * every option is a camelCase key, typed by its kind (numbers, booleans, number lists, int64 seeds), enumerated
 * strings as unions of their choices. A misspelled key or an unknown enum value fails `tsc`; the runtime
 * schema (./simulate.ts) is generated from the same table, so the two cannot drift apart.
 */
import type { TimeSeriesData } from '../cluster/timeseries.js';
import type { PdMetrics, PerModelMetrics, PerSloMetrics, PerTenantMetrics, SessionMetricsData } from '../metrics/section-data.js';
import type { Flag } from './options.js';
import type { AutoscalerReport } from './scaling-report.js';
import type { ReportData } from './report-data.js';
import type { AdmissionDelaysSection, FitnessSection, KvTiersSection, PolicyAnomaliesSection, PolicySection, TraceSection, TraceSummarySection } from './report-sections.js';

/** `num-requests` -> `numRequests` (the type-level twin of `camel()`). */
export type CamelName<S extends string> = S extends `${infer Head}-${infer Tail}` ? `${Head}${Capitalize<CamelName<Tail>>}` : S;

/** The value type of one option. */
export type OptionValue<F extends Flag> = F extends { readonly int64: true }
  ? bigint | number | string
  : F extends { readonly kind: 'string'; readonly choices: readonly (infer C)[] }
    ? C
    : F extends { readonly kind: 'string' }
      ? string
      : F extends { readonly kind: 'int' | 'float' }
        ? number
        : F extends { readonly kind: 'bool' }
          ? boolean
          : readonly number[];

/** Options that write files: the library takes `outputs` instead (see {@link SimulationOutputsRequest}). */
type WritesFile = Extract<Flag, { readonly writesFile: string }>;

/** The options of one mode (shared ones plus the mode's own), all optional, each with the CLI's default. */
export type SimulationOptions<Mode extends 'run' | 'replay'> = {
  readonly [F in Exclude<Flag, WritesFile> as F['scope'] extends 'shared' | Mode ? CamelName<F['name']> : never]?: OptionValue<F>;
};

/** Contents the result carries besides the metrics (what the CLI writes to files). */
export interface SimulationOutputsRequest {
  /** The metrics document with every request's details (`--metrics-path`): `result.files.metrics`. */
  readonly metrics?: boolean;
  /** The requests as TraceV2 (`--trace-output`; replay: header mode `replayed`): `result.files.traceYaml` and `traceCsv`. */
  readonly trace?: boolean;
  /** replay: the per-request results (`--results-path`): `result.files.results`. */
  readonly results?: boolean;
}

interface CommonConfig {
  /** Contents of the files that options name (`workloadSpec: 'w.yaml'` is read from `files['w.yaml']`). */
  readonly files?: Readonly<Record<string, string>>;
  /** Per-request contents to return; none by default (they grow with the number of requests). */
  readonly outputs?: SimulationOutputsRequest;
}

export type RunConfig = { readonly mode: 'run' } & SimulationOptions<'run'> & CommonConfig;
export type ReplayConfig = { readonly mode: 'replay' } & SimulationOptions<'replay'> & CommonConfig;
/** What `simulate()` takes: `mode` plus any CLI option of that mode as a camelCase key. */
export type SimulationConfig = RunConfig | ReplayConfig;

/** Goodput of one SLO class (present when goodput targets are configured). */
export interface ClassGoodput {
  readonly count: number;
  readonly goodput_rps: number;
  readonly slo_attainment: number;
  readonly e2e_p99_ms?: number;
  readonly itl_mean_ms?: number;
  readonly ttft_p99_ms?: number;
  readonly slo_attainment_by_dim?: Readonly<Record<string, number>>;
}

/** The reference's MetricsOutput (`simulation_metrics`, and each entry of `instances`). Latencies in ms. */
export interface SimulationMetrics {
  readonly instance_id: string;
  readonly completed_requests: number;
  readonly still_queued: number;
  readonly still_running: number;
  readonly injected_requests: number;
  readonly total_input_tokens: number;
  readonly total_output_tokens: number;
  readonly vllm_estimated_duration_s: number;
  readonly responses_per_sec: number;
  readonly tokens_per_sec: number;
  readonly e2e_mean_ms: number;
  readonly e2e_p90_ms: number;
  readonly e2e_p95_ms: number;
  readonly e2e_p99_ms: number;
  readonly ttft_mean_ms: number;
  readonly ttft_p90_ms: number;
  readonly ttft_p95_ms: number;
  readonly ttft_p99_ms: number;
  readonly itl_mean_ms: number;
  readonly itl_p90_ms: number;
  readonly itl_p95_ms: number;
  readonly itl_p99_ms: number;
  readonly scheduling_delay_p99_ms: number;
  /** Present only when non-zero (the reference's omitempty). */
  readonly kv_allocation_failures?: number;
  readonly preemption_count: number;
  readonly dropped_unservable: number;
  readonly length_capped_requests: number;
  readonly timed_out_requests: number;
  /** With goodput targets (`sloTtft`, `sloItl`, `sloE2e` or the workload spec's). */
  readonly goodput_rps?: number;
  readonly slo_attainment?: number;
  readonly per_class?: Readonly<Record<string, ClassGoodput>>;
  /** Per LoRA adapter that served, loaded or was evicted (present only when one did; `loraConfig`). */
  readonly adapters?: Readonly<Record<string, AdapterMetrics>>;
}

/** One LoRA adapter's counters: cold loads, evictions, TTFT percentiles (µs) and output tokens per second. */
export interface AdapterMetrics {
  readonly load_count: number;
  readonly eviction_count: number;
  readonly ttft_p50_us: number;
  readonly ttft_p99_us: number;
  readonly throughput_tok_per_s: number;
}

/** The reference's Anomaly Counters as numbers. */
export interface AnomalyCounters {
  readonly priority_inversions: number;
  readonly hol_blocking_events: number;
  readonly rejected_requests_admission: number;
  readonly rejected_requests_routing: number;
  readonly dropped_unservable: number;
  readonly timed_out_requests: number;
  readonly length_capped_requests: number;
  /**
   * `shed_<tier>` per SLO tier the tier-shed admission shed, and, when non-zero, `gateway_queue_depth_horizon`,
   * `gateway_queue_shed`, `gateway_queue_rejected`, `gateway_evicted_in_flight`, `gateway_expired_ttl`,
   * `encode_routing_rejections`.
   */
  readonly [counter: string]: number;
}

/** The reference's KV Cache Metrics (fractions, 4 decimals). */
export interface KvCacheMetrics {
  readonly preemption_rate: number;
  readonly cache_hit_rate: number;
  readonly kv_thrashing_rate: number;
}

/**
 * The default JSON output of `blis run` as an object: `simulation_metrics`, per-instance metrics with more
 * than one instance, the breakdowns (per SLO class, model, tenant, session) and P/D metrics as data (latencies
 * in ms), the other text sections as nested objects (`anomaly_counters`, `kv_cache_metrics`,
 * `fitness`, `trace_summary`), and the JSON-only sections (`autoscaler`, `policy`, `trace`, ...)
 * when they apply.
 */
export type SimulationReport = {
  readonly simulation_metrics: SimulationMetrics;
  readonly instances?: readonly SimulationMetrics[];
  /** When anything anomalous happened (a rejection, a timeout, a drop, an inversion...). */
  readonly anomaly_counters?: AnomalyCounters;
  /** When a preemption, a cache hit or a KV thrashing cycle happened. */
  readonly kv_cache_metrics?: KvCacheMetrics;
  /** With more than one SLO class (or one and goodput targets). */
  readonly per_slo_metrics?: PerSloMetrics;
  /** When requests name a model (`--deployment`, a workload spec client's `model`). */
  readonly per_model_metrics?: PerModelMetrics;
  /** When completed requests carry a tenant id. */
  readonly per_tenant_metrics?: PerTenantMetrics;
  /** When requests belong to sessions. */
  readonly session_metrics?: SessionMetricsData;
  /** P/D disaggregation, when a request was split. */
  readonly pd_metrics?: PdMetrics;
  /** Runs with an instance lifecycle (node pools or an autoscaler). */
  readonly autoscaler?: AutoscalerReport;
  /** With `fitnessWeights`: the weighted score and its components. */
  readonly fitness?: FitnessSection;
  /** With `summarizeTrace` and decisions traced. */
  readonly trace_summary?: TraceSummarySection;
  /** When the policy bundle names its candidate, or decisions are traced with evolvable policies. */
  readonly policy?: PolicySection;
  /** When an admission policy delayed a request. */
  readonly admission_delays?: AdmissionDelaysSection;
  /** With a storage KV tier. */
  readonly kv_tiers?: KvTiersSection;
  /** Always in the JSON report: the policy-level anomaly detectors. */
  readonly policy_anomalies?: PolicyAnomaliesSection;
  /** With `traceLevel: 'decisions' | 'full'`. */
  readonly trace?: TraceSection;
  /** With `reportData: true`: what blis report and blis compare draw. */
  readonly report_data?: ReportData;
};

export interface SimulationResult {
  /** The cluster metrics (the reference's MetricsOutput fields). */
  readonly metrics: SimulationMetrics;
  /** The whole JSON report (what `blis run` prints by default). */
  readonly report: SimulationReport;
  /** What the reference CLI prints with `--output-format reference`, byte for byte. */
  readonly referenceText: string;
  /** The contents `config.outputs` asked for (what the CLI writes to files). */
  readonly files: {
    readonly metrics?: string;
    readonly traceYaml?: string;
    readonly traceCsv?: string;
    readonly results?: string;
    /** The time series as `timeseriesPath` names its format (.csv / .jsonl, or `timeseriesFormat`). */
    readonly timeseries?: string;
  };
  /**
   * The sampled time series (per instance and cluster-wide; counters as per-row deltas) when
   * `timeseriesIntervalUs` > 0 or `timeseriesPath` is set; null otherwise.
   */
  readonly timeseries: TimeSeriesData | null;
  /** Warnings the CLI would print on stderr (none with `log: 'error'`). */
  readonly warnings: readonly string[];
}

/** Progress of a running simulation, reported at most once per yield to the event loop and once at the end. */
export interface SimulationProgress {
  /** The simulated clock, µs. */
  readonly simulatedTimeUs: number;
  /** Requests that reached the cluster so far. */
  readonly requestsArrived: number;
  /** Requests that ended (completed, dropped, timed out or rejected) so far. */
  readonly requestsDone: number;
  /** Requests the run will see in all; null when closed-loop follow-ups make it unknown. */
  readonly requestsTotal: number | null;
  /**
   * Wall-clock seconds left, from the pace of the last half of the run so far (arrivals weigh twice what
   * completions do); null while unknown (no total, or no progress yet). 0 at the end.
   */
  readonly etaSeconds: number | null;
}

/** How `simulate()` runs: cancellation, progress and its time slicing. */
export interface SimulateOptions {
  /** Aborting rejects the call with a BlisError of code `aborted`. */
  readonly signal?: AbortSignal;
  readonly onProgress?: (p: SimulationProgress) => void;
  /** Longest stretch of simulation between two yields to the event loop, ms (default 10; at most 50). */
  readonly sliceMs?: number;
  /** Monotonic wall clock in ms (default `performance.now`); tests inject a fake one. */
  readonly now?: () => number;
  /**
   * Wall-clock budget (ms) of a run whose policies include fast-engine code, unless the config sets
   * `policyWallClockS` (which wins); absent: that key's default (600 s); 0: none. Past it the run fails with
   * SANDBOX_BUDGET. `blis sweep --timeout-s` sets it for each point.
   */
  readonly wallClockMs?: number;
}
