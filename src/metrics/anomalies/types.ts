/**
 * The anomaly report's types shared by every detector: the anomaly types in report order, an event, the
 * thresholds (with defaults), the records the detectors read (`AnomalyInputs`) and the report.
 */
import type { TierCycleSample } from './tier-thrashing.js';

export type AnomalyType =
  | 'priority_inversion'
  | 'slo_violation'
  | 'cache_thrashing'
  | 'shadow_divergence'
  | 'scale_oscillation'
  | 'pd_backpressure'
  | 'preemption_storm';

export const ANOMALY_TYPES: readonly AnomalyType[] = Object.freeze([
  'priority_inversion',
  'slo_violation',
  'cache_thrashing',
  'shadow_divergence',
  'scale_oscillation',
  'pd_backpressure',
  'preemption_storm',
] as const);

export interface AnomalyEvent {
  readonly type: AnomalyType;
  readonly timestampUs: number;
  readonly description: string;
  readonly requests: readonly string[];
  readonly severity: number;
}

export interface AnomalyThresholds {
  /** Window (µs) for SLO/shadow aggregation, storms and thrashing; 4× it for scale oscillation. */
  windowUs: number;
  /** Preemptions on one instance within windowUs that make a storm. */
  preemptionStormCount: number;
  /** Reloads on one instance within an aligned window that (with the share) make thrashing. */
  thrashingReloads: number;
  /** ... and reloads >= this share of the offloads in that window. */
  thrashingReloadShare: number;
  /** Direction changes of one deployment within 4 × windowUs that make an oscillation. */
  scaleOscillationFlips: number;
  /** Pending prefill->decode KV transfers on one instance that open a backpressure episode. */
  pdBackpressureQueue: number;
  /** Request ids listed per event (the full count is in the description). */
  maxRequestsPerEvent: number;
  /** Events kept per type, the earliest (counts still count all). */
  maxEventsPerType: number;
}

export const DEFAULT_ANOMALY_THRESHOLDS: AnomalyThresholds = Object.freeze({
  windowUs: 1_000_000,
  preemptionStormCount: 10,
  thrashingReloads: 32,
  thrashingReloadShare: 0.5,
  scaleOscillationFlips: 2,
  pdBackpressureQueue: 16,
  maxRequestsPerEvent: 10,
  maxEventsPerType: 100,
});

/** The span, in windows, within which scale flips count together. */
export const SCALE_OSCILLATION_WINDOWS = 4;

export interface AnomalyRequestRecord {
  id: string;
  instance: string;
  sloClass: string;
  arrivalUs: number;
  /** First scheduled into a batch; null = never. */
  scheduledUs: number | null;
  ttftUs: number | null;
  itlMeanUs: number | null;
  e2eUs: number | null;
  /** vLLM convention: lower = more urgent. */
  priority: number;
  /** The request's own TTFT target, 0 = none. */
  sloTargetUs: number;
}

export interface AnomalyInputs {
  /** Per-request records, any order (sort as you need, deterministically: by time then id). */
  readonly requests: readonly AnomalyRequestRecord[];
  /** Per-class goodput targets in ms (0 = dimension not gated); null = none. */
  readonly sloTargets: ReadonlyMap<string, { ttftMs: number; itlMs: number; e2eMs: number }> | null;
  /** Whether the instance scheduler promises priority order (priority-aware scheduling in effect). Inversions are only reported when true. */
  readonly priorityScheduling: boolean;
  readonly preemptions: readonly { timeUs: number; instance: string; requestId: string }[];
  readonly routings: readonly { timeUs: number; requestId: string; instance: string; expectedHit: boolean; actualHit: boolean }[];
  /** Cumulative KV transfer counters sampled over time per instance (non-decreasing). */
  readonly kvSamples: readonly { timeUs: number; instance: string; offloads: number; reloads: number }[];
  /** Reload cycles across the KV tiers (only with a storage tier; cache-thrashing.ts, tier-thrashing.ts). */
  readonly tierCycles?: readonly TierCycleSample[];
  readonly scaleEvents: readonly { timeUs: number; deployment: string; from: number; to: number }[];
  readonly pdQueueSamples: readonly { timeUs: number; instance: string; pending: number; requestIds: readonly string[] }[];
}

export interface AnomalyReport {
  readonly counts: Readonly<Record<AnomalyType, number>>;
  /** Sorted by timestampUs, then type order, then description. */
  readonly events: readonly AnomalyEvent[];
}
