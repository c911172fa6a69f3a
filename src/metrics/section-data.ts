/**
 * The breakdown sections of the JSON output as data: the same figures as the reference's text sections
 * (sections.ts, pd.ts) as numbers, latencies in ms like `simulation_metrics`, named the same way
 * (`<metric>_<stat>_ms`, `<metric>_count`), full precision, keys in the order the text prints them.
 * The reference text (`--output-format reference`) never changes.
 */
import type { ModelMetrics, SessionMetrics, SloMetrics, TenantMetrics } from './breakdowns.js';
import { jainFairnessIndex } from './breakdowns.js';
import type { Distribution } from './cluster-metrics.js';
import { goSortedKeys } from '../gocompat/go-format.js';
import type { PdSummary } from './pd.js';

/** The statistics every latency distribution of these sections carries. */
export type LatencyStat = 'mean' | 'p50' | 'p90' | 'p95' | 'p99';

/** `<prefix>_mean_ms`, `<prefix>_p50_ms`, `<prefix>_p90_ms`, `<prefix>_p95_ms`, `<prefix>_p99_ms` (0 when the count is 0). */
export type LatencyStatsMs<P extends string> = { readonly [K in `${P}_${LatencyStat}_ms`]: number };

/** `<prefix>_count`: the number of samples of the distribution. */
export type SampleCount<P extends string> = { readonly [K in `${P}_count`]: number };

/**
 * One SLO class of `per_slo_metrics`: TTFT, the per-request mean ITL and E2E, in ms. `ttft_count` counts the
 * requests with a first token (under `--semantics corrected`, the completed ones only); ITL and E2E are over the
 * `completed_requests` (requests with an end-to-end latency, as in `simulation_metrics`' E2E figures).
 */
export interface SloClassMetrics extends SampleCount<'ttft'>, LatencyStatsMs<'ttft'>, LatencyStatsMs<'itl'>, LatencyStatsMs<'e2e'> {
  readonly completed_requests: number;
}

/** `per_slo_metrics`: one entry per SLO class (`default` for requests without one), sorted. */
export type PerSloMetrics = Readonly<Record<string, SloClassMetrics>>;

/**
 * One model of `per_model_metrics` (keyed by the model's name): TTFT and E2E in ms (counts as in
 * {@link SloClassMetrics}), completed requests and output tokens per second of simulated time (tokens: the
 * planned output lengths, or the generated ones under `--semantics corrected`).
 */
export interface ModelMetricsData extends SampleCount<'ttft'>, LatencyStatsMs<'ttft'>, LatencyStatsMs<'e2e'> {
  readonly completed_requests: number;
  readonly responses_per_sec: number;
  readonly tokens_per_sec: number;
}

/** `per_model_metrics`: one entry per model name, sorted. */
export type PerModelMetrics = Readonly<Record<string, ModelMetricsData>>;

/** One tenant of `per_tenant_metrics`: completed requests and their output tokens (planned; corrected: generated). */
export interface TenantMetricsData {
  readonly completed_requests: number;
  readonly output_tokens: number;
}

/** `per_tenant_metrics`: the tenants (sorted) and Jain's fairness index over their output tokens. */
export interface PerTenantMetrics {
  readonly tenants: Readonly<Record<string, TenantMetricsData>>;
  readonly jain_fairness_index: number;
}

/**
 * `session_metrics`: the number of sessions, the TTFT of round-0 (cold) and later (warm) rounds, and each
 * session's duration (round-0 arrival to its last completion), in ms.
 */
export interface SessionMetricsData
  extends SampleCount<'ttft_cold'>, LatencyStatsMs<'ttft_cold'>, SampleCount<'ttft_warm'>, LatencyStatsMs<'ttft_warm'>,
    SampleCount<'session_duration'>, LatencyStatsMs<'session_duration'> {
  readonly sessions: number;
}

/**
 * `pd_metrics` (P/D disaggregation): split requests, decode-side KV drops, each pool's completed sub-requests
 * per second, the ratio of the larger to the smaller (null when exactly one pool completed nothing: the text's
 * `inf`), the parents' TTFT and the KV transfer durations in ms; with `--pd-transfer-contention` the peak number
 * of concurrent transfers and the mean transfer queue depth.
 */
export interface PdMetrics extends SampleCount<'parent_ttft'>, LatencyStatsMs<'parent_ttft'>, SampleCount<'kv_transfer'>, LatencyStatsMs<'kv_transfer'> {
  readonly disaggregated_requests: number;
  readonly dropped_at_decode_kv: number;
  readonly prefill_sub_requests_per_sec: number;
  readonly decode_sub_requests_per_sec: number;
  readonly load_imbalance_ratio: number | null;
  readonly peak_concurrent_transfers?: number;
  readonly mean_transfer_queue_depth?: number;
}

type Stats = Pick<Distribution, 'count' | LatencyStat>;

/** The statistics of `d` under `prefix`, divided by `scale` (1000: µs -> ms). */
function latency<P extends string>(prefix: P, d: Stats, scale: number): LatencyStatsMs<P> {
  const out: Record<string, number> = {};
  out[`${prefix}_mean_ms`] = d.mean / scale;
  out[`${prefix}_p50_ms`] = d.p50 / scale;
  out[`${prefix}_p90_ms`] = d.p90 / scale;
  out[`${prefix}_p95_ms`] = d.p95 / scale;
  out[`${prefix}_p99_ms`] = d.p99 / scale;
  return out as LatencyStatsMs<P>;
}

/** `<prefix>_count`, then {@link latency}. */
function counted<P extends string>(prefix: P, d: Stats, scale: number): SampleCount<P> & LatencyStatsMs<P> {
  return { [`${prefix}_count`]: d.count, ...latency(prefix, d, scale) } as SampleCount<P> & LatencyStatsMs<P>;
}

const US = 1e3;

export function perSloData(slo: ReadonlyMap<string, SloMetrics>): PerSloMetrics {
  const out: Record<string, SloClassMetrics> = {};
  for (const cls of goSortedKeys(slo)) {
    const m = slo.get(cls) as SloMetrics;
    // ITL and E2E are recorded together at completion: one count for both.
    out[cls] = { completed_requests: m.e2e.count, ...counted('ttft', m.ttft, US), ...latency('itl', m.itl, US), ...latency('e2e', m.e2e, US) };
  }
  return out;
}

export function perModelData(models: ReadonlyMap<string, ModelMetrics>): PerModelMetrics {
  const out: Record<string, ModelMetricsData> = {};
  for (const name of goSortedKeys(models)) {
    const m = models.get(name) as ModelMetrics;
    out[name] = {
      completed_requests: m.totalRequests,
      ...counted('ttft', m.ttft, US),
      ...latency('e2e', m.e2e, US),
      responses_per_sec: m.throughputRps,
      tokens_per_sec: m.tokensPerSec,
    };
  }
  return out;
}

export function perTenantData(tenants: ReadonlyMap<string, TenantMetrics>): PerTenantMetrics {
  const out: Record<string, TenantMetricsData> = {};
  const tokens = new Map<string, number>();
  for (const id of goSortedKeys(tenants)) {
    const t = tenants.get(id) as TenantMetrics;
    out[id] = { completed_requests: t.completedRequests, output_tokens: t.totalTokensServed };
    tokens.set(id, t.totalTokensServed);
  }
  return { tenants: out, jain_fairness_index: jainFairnessIndex(tokens) };
}

/** Session distributions are in ms already. */
export function sessionData(s: SessionMetrics): SessionMetricsData {
  return {
    sessions: s.sessionCount,
    ...counted('ttft_cold', s.ttftCold, 1),
    ...counted('ttft_warm', s.ttftWarm, 1),
    ...counted('session_duration', s.sessionDuration, 1),
  };
}

export function pdData(s: PdSummary, contention: boolean): PdMetrics {
  return {
    disaggregated_requests: s.disaggregatedCount,
    dropped_at_decode_kv: s.droppedAtDecodeKV,
    prefill_sub_requests_per_sec: s.prefillThroughput,
    decode_sub_requests_per_sec: s.decodeThroughput,
    load_imbalance_ratio: s.loadImbalanceRatio === Infinity ? null : s.loadImbalanceRatio,
    ...counted('parent_ttft', s.parentTtft, US),
    ...counted('kv_transfer', s.transferDuration, US),
    ...(contention ? { peak_concurrent_transfers: s.peakConcurrentTransfers, mean_transfer_queue_depth: s.meanTransferQueueDepth } : {}),
  };
}
