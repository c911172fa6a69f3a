/**
 * The `=== PD Metrics ===` section (reference pd_metrics.go CollectPDMetrics / printPDMetrics) and the
 * cluster aggregate of a disaggregated run: corrected counts, per-request view of parents instead of halves.
 */
import { PdPart, type Request } from '../domain/request.js';
import { goFixed } from '../gocompat/go-format.js';
import type { MetricsView } from './output.js';
import { percentileFromSorted } from './stats.js';

/** What the PD section reads of one split request (after the projection). */
export interface PdParentFacts {
  readonly id: string;
  readonly transferStartTime: number;
  readonly transferCompleteTime: number;
  /** The parent request carrying its projected TTFT. */
  readonly req: Pick<Request, 'hasTTFT' | 'ttft'>;
}

export interface PdPoolInstance {
  readonly completedRequests: number;
  readonly prefill: boolean;
  readonly decode: boolean;
}

export interface PdSectionInput {
  readonly parents: readonly PdParentFacts[];
  readonly instances: readonly PdPoolInstance[];
  /** The cluster's SimEndedTime (µs). */
  readonly simEndedTime: number;
  readonly contention: boolean;
  readonly peakConcurrentTransfers: number;
  readonly meanTransferQueueDepth: number;
  /** --semantics corrected: the decode-side KV drops (the reference's line is always 0). */
  readonly droppedAtDecodeKV?: number;
}

export interface PdSummary {
  readonly disaggregatedCount: number;
  readonly droppedAtDecodeKV: number;
  readonly prefillThroughput: number;
  readonly decodeThroughput: number;
  /** max/min of the two throughputs; 1 when both are 0; Infinity when exactly one is 0. */
  readonly loadImbalanceRatio: number;
  readonly parentTtft: Distribution;
  readonly transferDuration: Distribution;
  readonly peakConcurrentTransfers: number;
  readonly meanTransferQueueDepth: number;
}

export interface Distribution {
  readonly count: number;
  readonly mean: number;
  readonly p50: number;
  /** JSON output only (the reference's line has no p90). */
  readonly p90: number;
  readonly p95: number;
  readonly p99: number;
}

function distribution(values: number[]): Distribution {
  if (values.length === 0) return { count: 0, mean: 0, p50: 0, p90: 0, p95: 0, p99: 0 };
  const s = values.slice().sort((a, b) => a - b);
  let sum = 0;
  for (const v of s) sum += v;
  return { count: s.length, mean: sum / s.length, p50: percentileFromSorted(s, 50), p90: percentileFromSorted(s, 90), p95: percentileFromSorted(s, 95), p99: percentileFromSorted(s, 99) };
}

/** Null when nothing was split (the reference prints no section then). */
export function summarizePd(inp: PdSectionInput): PdSummary | null {
  if (inp.parents.length === 0) return null;
  const ttft: number[] = [];
  const transfer: number[] = [];
  let disaggregated = 0;
  for (const p of inp.parents) {
    if (p.transferCompleteTime > 0) disaggregated++;
    if (p.req.hasTTFT && p.req.ttft > 0) ttft.push(p.req.ttft);
    if (p.transferStartTime > 0 && p.transferCompleteTime >= p.transferStartTime) transfer.push(p.transferCompleteTime - p.transferStartTime);
  }
  let prefillRps = 0;
  let decodeRps = 0;
  let ratio = 1;
  if (inp.instances.length > 0 && inp.simEndedTime > 0) {
    let pc = 0;
    let dc = 0;
    for (const i of inp.instances) {
      if (i.prefill) pc += i.completedRequests;
      if (i.decode) dc += i.completedRequests;
    }
    const secs = inp.simEndedTime / 1e6;
    prefillRps = pc / secs;
    decodeRps = dc / secs;
    const lo = Math.min(prefillRps, decodeRps);
    const hi = Math.max(prefillRps, decodeRps);
    ratio = hi === 0 ? 1 : lo <= 0 ? Infinity : hi / lo;
  }
  return {
    disaggregatedCount: disaggregated,
    // The reference counts transfers completed to no decode pod, which never happens (always 0).
    droppedAtDecodeKV: inp.droppedAtDecodeKV ?? 0,
    prefillThroughput: prefillRps,
    decodeThroughput: decodeRps,
    loadImbalanceRatio: ratio,
    parentTtft: distribution(ttft),
    transferDuration: distribution(transfer),
    peakConcurrentTransfers: inp.contention ? inp.peakConcurrentTransfers : 0,
    meanTransferQueueDepth: inp.contention ? inp.meanTransferQueueDepth : 0,
  };
}

export function pdMetricsLines(s: PdSummary | null, contention: boolean): string[] | null {
  if (s === null) return null;
  const lines = [
    `Disaggregated Requests: ${s.disaggregatedCount}`,
    `Dropped at Decode KV: ${s.droppedAtDecodeKV}`,
    `Prefill Throughput: ${goFixed(s.prefillThroughput, 4)} sub-req/s`,
    `Decode Throughput: ${goFixed(s.decodeThroughput, 4)} sub-req/s`,
    s.loadImbalanceRatio === Infinity ? 'Load Imbalance Ratio: inf (one pool idle)' : `Load Imbalance Ratio: ${goFixed(s.loadImbalanceRatio, 4)}`,
  ];
  const dist = (label: string, d: Distribution): void => {
    if (d.count > 0) lines.push(`${label} (us): mean=${goFixed(d.mean, 1)} p50=${goFixed(d.p50, 1)} p95=${goFixed(d.p95, 1)} p99=${goFixed(d.p99, 1)}`);
  };
  dist('Parent TTFT', s.parentTtft);
  dist('KV Transfer Duration', s.transferDuration);
  if (contention) {
    lines.push(`Peak Concurrent Transfers: ${s.peakConcurrentTransfers}`, `Mean Transfer Queue Depth: ${goFixed(s.meanTransferQueueDepth, 4)}`);
  }
  return lines;
}

/** Count corrections of a disaggregated run's aggregate (see cluster/pd/project.ts). */
export interface PdAggregateCorrections {
  readonly completedDelta: number;
  readonly droppedDelta: number;
  readonly stillRunningDelta: number;
}

/** The cluster aggregate with the halves replaced by their parents and the counts corrected. */
export function pdAggregate(agg: MetricsView, c: PdAggregateCorrections, parents: readonly Request[]): MetricsView {
  const requests: Request[] = [];
  for (const r of agg.requests) if (r.pdPart === PdPart.None) requests.push(r);
  for (const p of parents) requests.push(p);
  return {
    ...agg,
    completedRequests: agg.completedRequests + c.completedDelta,
    droppedUnservable: agg.droppedUnservable + c.droppedDelta,
    stillRunning: agg.stillRunning + c.stillRunningDelta,
    requests,
  };
}
