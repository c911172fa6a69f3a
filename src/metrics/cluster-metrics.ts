/**
 * Cluster-level raw metrics (the reference's `RawMetrics`, blis-cluster.md §5.2): latency distributions in
 * ticks, throughput, and the anomaly detectors (priority inversions, HOL blocking). Pure functions over the
 * per-request outcomes recorded on the Request objects and the per-instance samples.
 */
import type { Request } from '../domain/request.js';
import type { InstanceMetrics } from '../instance/instance-metrics.js';
import type { MetricsView, RawCounters } from './output.js';
import { percentileFromSorted } from './stats.js';

/** The per-request outcome fields the reductions read (a Request satisfies it; tests pass plain objects). */
export type RequestOutcomeView = Pick<
  Request,
  | 'id'
  | 'registered'
  | 'hasTTFT'
  | 'ttft'
  | 'hasE2E'
  | 'e2e'
  | 'itlMean'
  | 'sloClass'
  | 'tenantId'
  | 'model'
  | 'sessionId'
  | 'roundIndex'
  | 'arrivalTime'
  | 'outputLen'
  | 'inputLen'
  | 'progressIndex'
>;

/** Summary statistics of one metric, in the unit of its inputs (ticks unless stated otherwise). */
export interface Distribution {
  readonly mean: number;
  readonly p50: number;
  /** Not in the reference's Distribution (nothing it prints reads it): for the JSON output's breakdowns. */
  readonly p90: number;
  readonly p95: number;
  readonly p99: number;
  readonly min: number;
  readonly max: number;
  readonly count: number;
}

export const EMPTY_DISTRIBUTION: Distribution = { mean: 0, p50: 0, p90: 0, p95: 0, p99: 0, min: 0, max: 0, count: 0 };

/**
 * The reference's NewDistribution. The mean sums the values in ascending order: for fractional inputs (mean
 * ITLs, ms conversions) the float sum depends on the order, so this order is part of the result.
 */
export function newDistribution(values: ArrayLike<number>): Distribution {
  const n = values.length;
  if (n === 0) return EMPTY_DISTRIBUTION;
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i] as number;
  return {
    mean: sum / n,
    p50: percentileFromSorted(sorted, 50),
    p90: percentileFromSorted(sorted, 90),
    p95: percentileFromSorted(sorted, 95),
    p99: percentileFromSorted(sorted, 99),
    min: sorted[0] as number,
    max: sorted[n - 1] as number,
    count: n,
  };
}

/** What the detectors and KV means need from one instance. */
export interface InstanceRawView {
  readonly requests: readonly RequestOutcomeView[];
  /** Wait-queue length sampled at every step. */
  readonly waitQSamples: ArrayLike<number>;
  readonly preemptionCount: number;
  readonly cacheHitRate: number;
  readonly kvThrashingRate: number;
}

export function instanceRawView(m: InstanceMetrics): InstanceRawView {
  return {
    requests: m.requests,
    waitQSamples: m.waitQSamples.toArray(),
    preemptionCount: m.preemptionCount,
    cacheHitRate: m.cacheHitRate,
    kvThrashingRate: m.kvThrashingRate,
  };
}

/** Binary indexed tree over ranks 0..n-1 counting inserted elements. */
class Fenwick {
  private readonly t: Int32Array;
  constructor(n: number) {
    this.t = new Int32Array(n + 1);
  }
  add(rank: number): void {
    for (let i = rank + 1; i < this.t.length; i += i & -i) this.t[i] = (this.t[i] as number) + 1;
  }
  /** Number of inserted elements with rank < `rank`. */
  countBelow(rank: number): number {
    let s = 0;
    for (let i = rank; i > 0; i -= i & -i) s += this.t[i] as number;
    return s;
  }
}

/** Pairs i<j (arrival order) with e2e[i] > 2·e2e[j], in O(n log n). Arrays are parallel. */
export function countInversionPairs(arrived: Float64Array, e2e: Float64Array): number {
  const n = arrived.length;
  if (n < 2) return 0;
  const order = Array.from({ length: n }, (_, i) => i);
  // The reference sorts with an unstable sort over map-iteration order, so the relative order of equal
  // arrival times is unspecified there. Ordering ties by ascending E2E makes them never count, which is
  // one of the reference's possible outcomes and the only one that does not depend on input order.
  order.sort((a, b) => (arrived[a] as number) - (arrived[b] as number) || (e2e[a] as number) - (e2e[b] as number));
  const uniq = Float64Array.from(e2e).sort();
  let m = 0;
  for (let i = 0; i < n; i++) if (i === 0 || uniq[i] !== uniq[m - 1]) uniq[m++] = uniq[i] as number;
  const values = uniq.subarray(0, m);
  const rankOf = (v: number): number => lowerBound(values, v);
  const tree = new Fenwick(m);
  let count = 0;
  for (let k = 0; k < n; k++) {
    const j = order[k] as number;
    const threshold = (e2e[j] as number) * 2.0;
    // Earlier elements strictly greater than the threshold: all inserted minus those ranked <= threshold.
    count += k - tree.countBelow(upperBound(values, threshold));
    tree.add(rankOf(e2e[j] as number));
  }
  return count;
}

function lowerBound(a: Float64Array, v: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((a[mid] as number) < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function upperBound(a: Float64Array, v: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((a[mid] as number) <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Priority inversions (reference detectPriorityInversions): only meaningful under `priority-fcfs`, the one
 * scheduler that promises priority order; counted per instance and per SLO class ("" → "default") over the
 * requests that have an E2E. Classes are independent, so their iteration order does not matter.
 */
export function detectPriorityInversions(perInstance: readonly Pick<InstanceRawView, 'requests'>[], scheduler: string): number {
  if (scheduler !== 'priority-fcfs') return 0;
  let count = 0;
  for (const inst of perInstance) {
    const groups = new Map<string, { arrived: number[]; e2e: number[] }>();
    for (const r of inst.requests) {
      // The instance's request table drops unservable requests, which never have an E2E anyway.
      if (!r.registered || !r.hasE2E) continue;
      const cls = r.sloClass === '' ? 'default' : r.sloClass;
      let g = groups.get(cls);
      if (!g) {
        g = { arrived: [], e2e: [] };
        groups.set(cls, g);
      }
      // Arrival in seconds, as the reference stores it: a monotone map of the tick, kept for exactness.
      g.arrived.push(r.arrivalTime / 1e6);
      g.e2e.push(r.e2e);
    }
    for (const g of groups.values()) count += countInversionPairs(Float64Array.from(g.arrived), Float64Array.from(g.e2e));
  }
  return count;
}

/**
 * HOL blocking (reference detectHOLBlocking): instances whose mean wait-queue depth exceeds twice the mean
 * of all instances' means. Idle instances count with mean 0, which is what makes a hot instance stand out.
 */
export function detectHolBlocking(waitQSamples: readonly ArrayLike<number>[]): number {
  if (waitQSamples.length < 2) return 0;
  const avgs: number[] = [];
  let total = 0;
  for (const s of waitQSamples) {
    let avg = 0;
    if (s.length > 0) {
      let sum = 0;
      for (let i = 0; i < s.length; i++) sum += s[i] as number;
      avg = sum / s.length;
    }
    avgs.push(avg);
    total += avg;
  }
  const meanAvg = total / avgs.length;
  if (!(meanAvg > 0)) return 0;
  let count = 0;
  for (const a of avgs) if (a > 2.0 * meanAvg) count++;
  return count;
}

/** Gateway / flow-control counters (zero when flow control is off). */
export interface GatewayCounters {
  readonly queueDepth: number;
  readonly queueShed: number;
  readonly queueRejected: number;
  readonly evicted: number;
  readonly expired: number;
}

/** The aggregate fields RawMetrics reads (a MetricsView satisfies it). */
export type AggregateView = Pick<
  MetricsView,
  'completedRequests' | 'totalOutputTokens' | 'simEndedTime' | 'droppedUnservable' | 'timedOutRequests' | 'lengthCappedRequests'
> & { readonly requests: readonly RequestOutcomeView[] };

export interface RawMetricsInput {
  readonly aggregate: AggregateView;
  /** Every instance, in instance order; null skips the detectors and KV rates (they stay 0). */
  readonly perInstance: readonly InstanceRawView[] | null;
  /** The instance scheduler name (`--scheduler` or the policy bundle's). */
  readonly scheduler: string;
  readonly rejectedRequests: number;
  readonly routingRejections: number;
  readonly encodeRoutingRejections?: number;
  readonly injectedByClass?: ReadonlyMap<string, number>;
  readonly shedByTier?: ReadonlyMap<string, number>;
  readonly gateway?: GatewayCounters;
  /** --semantics corrected: the TTFT distribution covers completed requests only (as E2E does). */
  readonly corrected?: boolean;
}

/** The reference's RawMetrics; extends the counters the Anomaly / KV sections print. */
export interface RawMetrics extends RawCounters {
  readonly ttft: Distribution;
  readonly e2e: Distribution;
  readonly requestsPerSec: number;
  readonly tokensPerSec: number;
  readonly injectedByClass: ReadonlyMap<string, number>;
}

export function collectRawMetrics(input: RawMetricsInput): RawMetrics {
  const agg = input.aggregate;
  const ttft: number[] = [];
  const e2e: number[] = [];
  // The reference reads the merged TTFT/E2E tables directly, registered or not.
  const completedOnly = input.corrected === true;
  for (const r of agg.requests) {
    if (r.hasTTFT && (r.hasE2E || !completedOnly)) ttft.push(r.ttft);
    if (r.hasE2E) e2e.push(r.e2e);
  }
  let rps = 0;
  let tps = 0;
  if (agg.simEndedTime > 0 && agg.completedRequests > 0) {
    const dur = agg.simEndedTime / 1e6;
    rps = agg.completedRequests / dur;
    tps = agg.totalOutputTokens / dur;
  }
  let inversions = 0;
  let hol = 0;
  let preemptionRate = 0;
  let cacheHitRate = 0;
  let kvThrashingRate = 0;
  const per = input.perInstance;
  if (per !== null) {
    inversions = detectPriorityInversions(per, input.scheduler);
    hol = detectHolBlocking(per.map((p) => p.waitQSamples));
    let preemptions = 0;
    let hit = 0;
    let thrash = 0;
    for (const p of per) {
      preemptions += p.preemptionCount;
      hit += p.cacheHitRate;
      thrash += p.kvThrashingRate;
    }
    if (agg.completedRequests > 0) preemptionRate = preemptions / agg.completedRequests;
    if (per.length > 0) {
      cacheHitRate = hit / per.length;
      kvThrashingRate = thrash / per.length;
    }
  }
  const gw = input.gateway;
  return {
    ttft: newDistribution(ttft),
    e2e: newDistribution(e2e),
    requestsPerSec: rps,
    tokensPerSec: tps,
    injectedByClass: new Map(input.injectedByClass ?? []),
    priorityInversions: inversions,
    holBlockingEvents: hol,
    rejectedRequests: input.rejectedRequests,
    shedByTier: new Map(input.shedByTier ?? []),
    routingRejections: input.routingRejections,
    droppedUnservable: agg.droppedUnservable,
    timedOutRequests: agg.timedOutRequests,
    lengthCappedRequests: agg.lengthCappedRequests,
    preemptionRate,
    cacheHitRate,
    kvThrashingRate,
    gatewayQueueDepth: gw?.queueDepth ?? 0,
    gatewayQueueShed: gw?.queueShed ?? 0,
    gatewayQueueRejected: gw?.queueRejected ?? 0,
    gatewayEvicted: gw?.evicted ?? 0,
    gatewayExpired: gw?.expired ?? 0,
    encodeRoutingRejections: input.encodeRoutingRejections ?? 0,
  };
}
