/**
 * The JSON-only sections of `blis run`'s report (and `simulate()`'s `report`) as types: what
 * policy-report.ts and kv-tiers-report.ts build, and what `--fitness-weights` and `--summarize-trace` add.
 * Times are µs where a key ends in `_us`; fractions are in [0, 1].
 */
import type { AnomalyType } from '../metrics/anomalies/types.js';

/** `fitness` (with `--fitness-weights`): the weighted score and each weighted component's normalised value. */
export interface FitnessSection {
  readonly score: number;
  readonly [component: string]: number;
}

/** `trace_summary` (with `--summarize-trace` and `--trace-level decisions|full`). */
export interface TraceSummarySection {
  readonly total_decisions: number;
  readonly admitted: number;
  readonly rejected: number;
  readonly unique_targets: number;
  /** Routed requests per instance id. */
  readonly target_distribution: Readonly<Record<string, number>>;
  readonly mean_regret: number;
  readonly max_regret: number;
}

/** How one evolvable control point is set (a template, a decision tree or sandboxed code). */
export type ControlPointDescription =
  | { readonly type: 'parameterized'; readonly template: string; readonly parameters: Readonly<Record<string, unknown>> }
  | { readonly type: 'decision_tree'; readonly nodes: number; readonly text: string }
  | {
      readonly type: 'code';
      readonly engine: 'fast' | 'strict';
      readonly entrypoint: string;
      readonly source: string;
      readonly limits: { readonly instructions: number; readonly memory_bytes: number };
    };

/** `policy`: the candidate's metadata (when the bundle names one) and its evolvable control points. */
export interface PolicySection {
  readonly id?: string;
  readonly generation?: number;
  readonly parent_id?: string | null;
  readonly mutations?: readonly string[];
  readonly control_points: Readonly<Record<string, ControlPointDescription>>;
}

/** `admission_delays`: when an admission policy delayed a request. */
export interface AdmissionDelaysSection {
  readonly delays: number;
  readonly delay_limit_rejections: number;
  readonly still_delayed: number;
}

/** One KV tier's figures (cluster sums or one instance). */
export interface KvTierFiguresJson {
  readonly capacity_blocks: number;
  readonly used_blocks: number;
  readonly utilization: number;
  readonly lookups: number;
  readonly hits: number;
  readonly hit_rate: number;
  readonly stores?: number;
  readonly evictions?: number;
}

export interface KvTierTransfersJson {
  readonly gpu_to_cpu_blocks: number;
  readonly cpu_to_gpu_blocks: number;
  readonly cpu_to_storage_blocks: number;
  readonly storage_to_gpu_blocks: number;
  readonly cpu_to_storage_bytes: number;
  readonly storage_to_gpu_bytes: number;
  readonly reload_cycles: number;
}

export interface KvTiersJson {
  readonly gpu: KvTierFiguresJson;
  readonly cpu: KvTierFiguresJson;
  readonly storage: KvTierFiguresJson;
  readonly transfers: KvTierTransfersJson;
}

/** `kv_tiers`: with a storage tier (`--kv-storage-blocks`), the cluster's sums and each instance's figures. */
export interface KvTiersSection {
  readonly cluster: KvTiersJson;
  readonly instances: readonly (KvTiersJson & { readonly instance_id: string })[];
}

export interface AnomalyEventJson {
  readonly type: AnomalyType;
  readonly timestamp_us: number;
  readonly description: string;
  readonly requests: readonly string[];
  readonly severity: number;
}

/** `policy_anomalies`: the policy-level anomaly detectors' counts (events with decisions traced). */
export interface PolicyAnomaliesSection {
  readonly counts: Readonly<Record<AnomalyType, number>>;
  /** Routing decisions where the router's shadow KV view disagreed with the instance's cache. */
  readonly shadow_divergences: number;
  readonly events?: readonly AnomalyEventJson[];
}

export interface TraceAdmission {
  readonly request_id: string;
  readonly clock_us: number;
  readonly admitted: boolean;
  readonly reason: string;
  readonly delay_us?: number;
}

export interface TraceRouting {
  readonly request_id: string;
  readonly clock_us: number;
  readonly chosen_instance: string;
  readonly reason: string;
  readonly scores?: Readonly<Record<string, number>>;
  readonly top_k?: readonly {
    readonly instance_id: string;
    readonly score: number;
    readonly queue_depth: number;
    readonly batch_size: number;
    readonly in_flight: number;
    readonly kv_utilization: number;
  }[];
  readonly regret: number;
  readonly expected_cache_hit?: boolean;
  readonly cache_hit?: boolean;
  readonly filtered_out?: readonly string[];
}

export interface TraceKvTierTransfer {
  readonly instance: string;
  readonly kind: string;
  readonly from: string;
  readonly to: string;
  readonly blocks: number;
  readonly bytes: number;
  readonly start_us: number;
  readonly end_us: number;
}

/** `trace` (with `--trace-level decisions|full`): every policy decision; `full` adds batches and preemptions. */
export interface TraceSection {
  readonly level: 'decisions' | 'full';
  readonly policy_id?: string;
  readonly admissions: readonly TraceAdmission[];
  readonly priorities?: readonly { readonly request_id: string; readonly clock_us: number; readonly score: number; readonly hints?: unknown }[];
  readonly routings: readonly TraceRouting[];
  readonly scale_decisions?: readonly {
    readonly clock_us: number;
    readonly target: string;
    readonly trigger: string;
    readonly current: number;
    readonly action: string;
    readonly target_replicas: number;
    readonly reason: string;
  }[];
  readonly scales?: readonly {
    readonly clock_us: number;
    readonly target: string;
    readonly action: string;
    readonly instance_id: string;
    readonly replicas: number;
    readonly reason: string;
  }[];
  readonly disaggregations?: readonly { readonly request_id: string; readonly clock_us: number; readonly disaggregate: boolean; readonly decode_instance: string | null; readonly reason: string }[];
  readonly encode_decisions?: readonly { readonly request_id: string; readonly clock_us: number; readonly encode: boolean; readonly decode_instance: string | null; readonly reason: string }[];
  readonly encode_routings?: readonly { readonly parent_request_id: string; readonly clock_us: number; readonly chosen_instance: string; readonly regret: number }[];
  readonly prefill_routings?: readonly { readonly parent_request_id: string; readonly clock_us: number; readonly chosen_instance: string; readonly regret: number }[];
  readonly kv_transfers?: readonly {
    readonly parent_request_id: string;
    readonly start_us: number;
    readonly duration_us: number;
    readonly blocks: number;
    readonly prefill_instance: string;
    readonly decode_instance: string;
  }[];
  readonly kv_tier_transfers?: readonly TraceKvTierTransfer[];
  readonly batches?: readonly {
    readonly time_us: number;
    readonly instance: string;
    readonly step: number;
    /** Each scheduled request and the tokens it ran in the step. */
    readonly scheduled: readonly { readonly id: string; readonly tokens: number }[];
    readonly newly_scheduled: readonly string[];
    readonly preempted: readonly string[];
    readonly duration_us: number;
    readonly kv_offloads: number;
    readonly kv_reloads: number;
  }[];
  readonly preemptions?: readonly { readonly time_us: number; readonly instance: string; readonly request_id: string }[];
}
