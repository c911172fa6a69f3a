/**
 * Reduction of raw instance metrics into the reference's `MetricsOutput` (blis-core.md §7, blis-cluster.md
 * §5.1) and the text sections of its stdout. Pure: takes recorded data, returns values and strings.
 */
import { goSortSlice } from '../gocompat/go-sort.js';
import type { Request } from '../domain/request.js';
import type { CountStore, InstanceMetrics, SampleStore } from '../instance/instance-metrics.js';
import { adapterMetrics, sumCounts, type AdapterCounts } from './adapters.js';
import { goFixed, goJsonIndent, goJsonIndentChunks } from '../gocompat/go-format.js';
import { meanMs, percentilesMs, weightedMeanMs, weightedPercentilesMs } from './stats.js';

/** The reference's aggregated `sim.Metrics` view, over one instance or the merged cluster. */
export interface MetricsView {
  completedRequests: number;
  stillQueued: number;
  stillRunning: number;
  droppedUnservable: number;
  timedOutRequests: number;
  lengthCappedRequests: number;
  totalInputTokens: number;
  totalOutputTokens: number;
  simEndedTime: number;
  preemptionCount: number;
  kvAllocationFailures: number;
  /** Mean over instances for the cluster view. */
  cacheHitRate: number;
  kvThrashingRate: number;
  /** Every registered (injected, not dropped) request. */
  requests: readonly Request[];
  /** The ITL multiset of completed requests, per instance: per-step values and their use counts. */
  itls: readonly ItlMultiset[];
  /** LoRA adapter loads and evictions (summed for the cluster). */
  adapterCounts: AdapterCounts;
}

export interface ItlMultiset {
  readonly values: SampleStore;
  readonly uses: CountStore;
  /** Values counted once each (ITLs spanning stalled steps); absent or empty in the reference's modes. */
  readonly extra?: SampleStore;
}

export function instanceView(m: InstanceMetrics): MetricsView {
  return {
    completedRequests: m.completedRequests,
    stillQueued: m.stillQueued,
    stillRunning: m.stillRunning,
    droppedUnservable: m.droppedUnservable,
    timedOutRequests: m.timedOutRequests,
    lengthCappedRequests: m.lengthCappedRequests,
    totalInputTokens: m.totalInputTokens,
    totalOutputTokens: m.totalOutputTokens,
    simEndedTime: m.simEndedTime,
    preemptionCount: m.preemptionCount,
    kvAllocationFailures: m.kvAllocationFailures,
    cacheHitRate: m.cacheHitRate,
    kvThrashingRate: m.kvThrashingRate,
    requests: m.requests,
    itls: [{ values: m.stepItl, uses: m.stepItlUses, extra: m.extraItl }],
    adapterCounts: { loads: m.adapterLoads, evictions: m.adapterEvictions },
  };
}

/** Sums counters, takes the max end time, means the cache rates (reference aggregateMetrics). */
export function aggregateViews(views: readonly MetricsView[]): MetricsView {
  const out: MetricsView = {
    completedRequests: 0, stillQueued: 0, stillRunning: 0, droppedUnservable: 0, timedOutRequests: 0,
    lengthCappedRequests: 0, totalInputTokens: 0, totalOutputTokens: 0, simEndedTime: 0, preemptionCount: 0,
    kvAllocationFailures: 0, cacheHitRate: 0, kvThrashingRate: 0, requests: [], itls: [],
    adapterCounts: sumCounts(views.map((v) => v.adapterCounts)),
  };
  const reqs: Request[] = [];
  const itls: ItlMultiset[] = [];
  for (const v of views) {
    out.completedRequests += v.completedRequests;
    out.stillQueued += v.stillQueued;
    out.stillRunning += v.stillRunning;
    out.droppedUnservable += v.droppedUnservable;
    out.timedOutRequests += v.timedOutRequests;
    out.lengthCappedRequests += v.lengthCappedRequests;
    out.totalInputTokens += v.totalInputTokens;
    out.totalOutputTokens += v.totalOutputTokens;
    out.simEndedTime = Math.max(out.simEndedTime, v.simEndedTime);
    out.preemptionCount += v.preemptionCount;
    out.kvAllocationFailures += v.kvAllocationFailures;
    out.cacheHitRate += v.cacheHitRate;
    out.kvThrashingRate += v.kvThrashingRate;
    for (const r of v.requests) reqs.push(r);
    for (const a of v.itls) itls.push(a);
  }
  if (views.length > 0) {
    out.cacheHitRate /= views.length;
    out.kvThrashingRate /= views.length;
  }
  out.requests = reqs;
  out.itls = itls;
  return out;
}

/** The (value, count) pairs of every instance's ITL multiset, steps with no completed use left out. */
function itlPairs(sets: readonly ItlMultiset[]): { values: Float64Array; counts: Float64Array } {
  // Counted first, then filled in place: the pairs go straight into their typed arrays.
  const parts = sets.map((set) => ({ v: set.values.toArray(), c: set.uses.counts, extra: set.extra !== undefined && set.extra.length > 0 ? set.extra.toArray() : null }));
  let n = 0;
  for (const { v, c, extra } of parts) {
    const m = Math.min(v.length, c.length);
    for (let i = 0; i < m; i++) if ((c[i] as number) > 0) n++;
    if (extra !== null) n += extra.length;
  }
  const values = new Float64Array(n);
  const counts = new Float64Array(n);
  let j = 0;
  for (const { v, c, extra } of parts) {
    const m = Math.min(v.length, c.length);
    for (let i = 0; i < m; i++) {
      const k = c[i] as number;
      if (k > 0) {
        values[j] = v[i] as number;
        counts[j++] = k;
      }
    }
    if (extra !== null) {
      for (let i = 0; i < extra.length; i++) {
        values[j] = extra[i] as number;
        counts[j++] = 1;
      }
    }
  }
  return { values, counts };
}

/** The reference `MetricsOutput` JSON object, keys in its field order. */
export type MetricsOutputJson = Record<string, unknown>;

/**
 * `corrected` (--semantics corrected): TTFT over completed requests only, like E2E (the reference also counts
 * timed-out and unfinished requests that produced a first token), and total_input_tokens over completed
 * requests (the reference sums every request that passed the enqueue guards, timeouts included).
 */
export function buildMetricsOutput(v: MetricsView, instanceId: string, corrected = false): MetricsOutputJson {
  const dur = v.simEndedTime / 1e6;
  let rps = 0;
  let tps = 0;
  const lat = { e2e: [0, 0, 0, 0], ttft: [0, 0, 0, 0], itl: [0, 0, 0, 0], sched99: 0 };
  if (v.completedRequests > 0) {
    const ttft: number[] = [];
    const e2e: number[] = [];
    const sched: number[] = [];
    for (const r of v.requests) {
      if (r.hasTTFT && (r.hasE2E || !corrected)) ttft.push(r.ttft);
      if (r.hasE2E) e2e.push(r.e2e);
      if (r.hasSchedulingDelay) sched.push(r.schedulingDelay);
    }
    // Dropped requests were removed from the reference's request map but keep their TTFT/E2E entries; they
    // never get either, so filtering registered requests only is equivalent.
    lat.ttft = [meanMs(ttft), ...percentilesMs(ttft, [90, 95, 99])];
    lat.e2e = [meanMs(e2e), ...percentilesMs(e2e, [90, 95, 99])];
    const itl = itlPairs(v.itls);
    lat.itl = [weightedMeanMs(itl.values, itl.counts), ...weightedPercentilesMs(itl.values, itl.counts, [90, 95, 99])];
    lat.sched99 = percentilesMs(sched, [99])[0] as number;
    if (dur > 0) {
      rps = v.completedRequests / dur;
      tps = v.totalOutputTokens / dur;
    }
  }
  const o: MetricsOutputJson = {
    instance_id: instanceId,
    completed_requests: v.completedRequests,
    still_queued: v.stillQueued,
    still_running: v.stillRunning,
    injected_requests: v.completedRequests + v.stillQueued + v.stillRunning + v.droppedUnservable + v.timedOutRequests,
    total_input_tokens: corrected ? completedInputTokens(v.requests) : v.totalInputTokens,
    total_output_tokens: v.totalOutputTokens,
    vllm_estimated_duration_s: dur,
    responses_per_sec: rps,
    tokens_per_sec: tps,
    e2e_mean_ms: lat.e2e[0],
    e2e_p90_ms: lat.e2e[1],
    e2e_p95_ms: lat.e2e[2],
    e2e_p99_ms: lat.e2e[3],
    ttft_mean_ms: lat.ttft[0],
    ttft_p90_ms: lat.ttft[1],
    ttft_p95_ms: lat.ttft[2],
    ttft_p99_ms: lat.ttft[3],
    itl_mean_ms: lat.itl[0],
    itl_p90_ms: lat.itl[1],
    itl_p95_ms: lat.itl[2],
    itl_p99_ms: lat.itl[3],
    scheduling_delay_p99_ms: lat.sched99,
  };
  if (v.kvAllocationFailures !== 0) o['kv_allocation_failures'] = v.kvAllocationFailures;
  o['preemption_count'] = v.preemptionCount;
  o['dropped_unservable'] = v.droppedUnservable;
  o['length_capped_requests'] = v.lengthCappedRequests;
  o['timed_out_requests'] = v.timedOutRequests;
  return o;
}

/**
 * Appends the per-adapter block (`adapters`), which the reference prints last (after the goodput fields), when
 * any adapter appears.
 */
export function withAdapters(output: MetricsOutputJson, v: MetricsView): MetricsOutputJson {
  const adapters = adapterMetrics(v.requests, v.adapterCounts, v.simEndedTime);
  if (adapters !== null) output['adapters'] = adapters;
  return output;
}

function completedInputTokens(requests: readonly Request[]): number {
  let n = 0;
  for (const r of requests) if (r.hasE2E) n += r.inputLen;
  return n;
}

/** Registered requests in the metrics file's row order: by id, then by the rendered arrived_at (seconds). */
function detailOrder(v: MetricsView): Request[] {
  const regs = v.requests.filter((r) => r.registered);
  regs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  // The reference sorts with Go's unstable sort.Slice; equal arrival times keep its order, not ours.
  goSortSlice(regs, (a, b) => a.arrivalTime / 1e6 < b.arrivalTime / 1e6);
  return regs;
}

/** The `--metrics-path` document: the output plus cache_hit_rate and per-request details (arrival order). */
export function buildMetricsFile(v: MetricsView, output: MetricsOutputJson, corrected = false): MetricsOutputJson {
  const regs = detailOrder(v);
  return metricsFileShape(v, output, regs.length > 0 ? regs.map((r) => requestDetail(r, corrected)) : null);
}

function metricsFileShape(v: MetricsView, output: MetricsOutputJson, rows: unknown): MetricsOutputJson {
  const o: MetricsOutputJson = {};
  for (const [k, val] of Object.entries(output)) {
    if (k === 'dropped_unservable') o['cache_hit_rate'] = v.cacheHitRate;
    o[k] = val;
    // `requests` sits right after timed_out_requests, before the optional saturation/goodput/adapters keys.
    if (k === 'timed_out_requests' && rows !== null) o['requests'] = rows;
  }
  return o;
}

/**
 * The `--metrics-path` document as text chunks (the bytes of goJsonIndent(buildMetricsFile(...))), one row
 * built at a time: a run of millions of requests never holds all the rows or the whole text.
 */
export function* metricsFileChunks(v: MetricsView, output: MetricsOutputJson, corrected = false): Generator<string> {
  const regs = detailOrder(v);
  if (regs.length === 0) {
    yield goJsonIndent(metricsFileShape(v, output, null));
    return;
  }
  const rows = (function* (): Generator<Record<string, unknown>> {
    for (const r of regs) yield requestDetail(r, corrected);
  })();
  yield* goJsonIndentChunks(metricsFileShape(v, output, []), 'requests', rows, regs.length);
}

/**
 * One request's row. The reference reads an enqueue time of 0 as "never queued at the gateway", so a request
 * queued at t = 0 reports no gateway delay; `corrected` reports it (a dispatched request was queued).
 */
function requestDetail(r: Request, corrected: boolean): Record<string, unknown> {
  const d: Record<string, unknown> = {
    arrived_at: r.arrivalTime / 1e6,
    requestID: r.id,
    num_prefill_tokens: r.inputLen,
    num_decode_tokens: r.outputLen,
    ttft_ms: r.hasTTFT ? r.ttft / 1e3 : 0,
    itl_ms: r.hasE2E ? r.itlMean / 1e3 : 0,
    e2e_ms: r.hasE2E ? r.e2e / 1e3 : 0,
    scheduling_delay_ms: r.hasSchedulingDelay ? r.schedulingDelay / 1e3 : 0,
  };
  if (r.sloClass !== '') d['slo_class'] = r.sloClass;
  if (r.tenantId !== '') d['tenant_id'] = r.tenantId;
  if (r.assignedInstance !== '') d['handled_by'] = r.assignedInstance;
  if (r.model !== '') d['model'] = r.model;
  if (r.adapter !== '') d['adapter'] = r.adapter;
  if (r.lengthCapped) d['length_capped'] = true;
  if (r.gatewayDispatchTime > 0 && (r.gatewayEnqueueTime > 0 || corrected)) {
    const delay = (r.gatewayDispatchTime - r.gatewayEnqueueTime) / 1000;
    if (delay !== 0) d['gateway_queue_delay_ms'] = delay;
  }
  if (r.sessionId !== '') d['session_id'] = r.sessionId;
  d['round_index'] = r.roundIndex;
  return d;
}

/** Cluster-level counters that are not part of MetricsOutput (reference RawMetrics subset). */
export interface RawCounters {
  priorityInversions: number;
  holBlockingEvents: number;
  rejectedRequests: number;
  shedByTier: ReadonlyMap<string, number>;
  routingRejections: number;
  droppedUnservable: number;
  timedOutRequests: number;
  lengthCappedRequests: number;
  preemptionRate: number;
  cacheHitRate: number;
  kvThrashingRate: number;
  // Gateway flow-control and encode-pool counters; absent means 0 (no flow control / no encode pool).
  gatewayQueueDepth?: number;
  gatewayQueueShed?: number;
  gatewayQueueRejected?: number;
  gatewayEvicted?: number;
  gatewayExpired?: number;
  encodeRoutingRejections?: number;
}

/** `=== Anomaly Counters ===` body lines, or null when the reference prints no such section. */
export function anomalyLines(c: RawCounters): string[] | null {
  // Trailing optional lines, each printed only when non-zero, in the reference's order.
  const extra: [string, number][] = [
    ['Gateway Queue Depth (horizon)', c.gatewayQueueDepth ?? 0],
    ['Gateway Queue Shed', c.gatewayQueueShed ?? 0],
    ['Gateway Queue Rejected', c.gatewayQueueRejected ?? 0],
    ['Gateway Evicted (in-flight)', c.gatewayEvicted ?? 0],
    ['Gateway Expired (TTL)', c.gatewayExpired ?? 0],
    ['Encode Routing Rejections', c.encodeRoutingRejections ?? 0],
  ];
  if (!(c.priorityInversions > 0 || c.holBlockingEvents > 0 || c.rejectedRequests > 0 || c.routingRejections > 0 ||
    c.droppedUnservable > 0 || c.lengthCappedRequests > 0 || c.timedOutRequests > 0 || extra.some(([, v]) => v > 0))) return null;
  const lines = [
    `Priority Inversions: ${c.priorityInversions}`,
    `HOL Blocking Events: ${c.holBlockingEvents}`,
    `Rejected Requests (Admission): ${c.rejectedRequests}`,
  ];
  for (const tier of [...c.shedByTier.keys()].sort()) lines.push(`  Shed (${tier}): ${c.shedByTier.get(tier) as number}`);
  lines.push(
    `Rejected Requests (Routing): ${c.routingRejections}`,
    `Dropped Unservable: ${c.droppedUnservable}`,
    `Timed Out Requests: ${c.timedOutRequests}`,
    `Length-Capped Requests: ${c.lengthCappedRequests}`,
  );
  for (const [label, v] of extra) if (v > 0) lines.push(`${label}: ${v}`);
  return lines;
}

/** `=== KV Cache Metrics ===` body lines, or null when all three rates are zero. */
export function kvCacheLines(c: RawCounters): string[] | null {
  if (c.preemptionRate === 0 && c.cacheHitRate === 0 && c.kvThrashingRate === 0) return null;
  return [
    `Preemption Rate: ${goFixed(c.preemptionRate, 4)}`,
    `Cache Hit Rate: ${goFixed(c.cacheHitRate, 4)}`,
    `KV Thrashing Rate: ${goFixed(c.kvThrashingRate, 4)}`,
  ];
}
