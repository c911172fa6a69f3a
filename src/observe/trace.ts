/**
 * Observe's outputs: TraceV2 rows and header, per-chunk ITL rows, and the latency summary on stdout.
 *
 * All times are µs since the observation started (arrival, send, first and last chunk, ITL chunks). The
 * reference writes absolute Unix µs for the send/chunk times, which makes `blis replay` run an epoch-scale
 * clock; relative times replay from zero (docs/reference-differences.md, O1).
 */
import type { ItlRecord } from '../calibrate/pairs.js';
import { recordFromRequest } from '../workload/trace-export.js';
import { emptyTraceHeader, type SloDimTargets, type TraceHeader, type TraceObservedKvMetrics, type TraceRecord } from '../workload/tracev2-types.js';
import type { ObservedRequest } from './orchestrator.js';

export function traceRecord(o: ObservedRequest): TraceRecord {
  const { req, pending, result } = o;
  const r = recordFromRequest(req, o.index);
  // What the server actually did overrides the plan: streaming mode, the output it produced, the priority sent.
  r.vllmPriority = pending.sloClass === '' ? 0 : pending.vllmPriority;
  r.streaming = pending.streaming;
  r.outputTokens = result.outputTokens;
  r.serverInputTokens = result.serverInputTokens;
  r.arrivalTimeUs = o.arrivalTimeUs;
  r.sendTimeUs = result.sendTimeUs;
  r.firstChunkTimeUs = result.firstChunkTimeUs;
  r.lastChunkTimeUs = result.lastChunkTimeUs;
  r.numChunks = result.numChunks;
  r.status = result.status;
  r.errorMessage = result.errorMessage;
  r.finishReason = result.finishReason;
  r.xRequestId = result.xRequestId;
  return r;
}

/** Chunk times of the successful streamed requests. */
export function itlRecords(observed: readonly ObservedRequest[]): ItlRecord[] {
  const out: ItlRecord[] = [];
  for (const o of observed) {
    if (o.result.status !== 'ok') continue;
    o.result.chunkTimes.forEach((t, i) => out.push({ requestId: o.index, chunkIndex: i, timestampUs: t }));
  }
  return out;
}

export interface ObserveHeaderInput {
  readonly createdAt: Date;
  readonly warmUpRequests: number;
  readonly workloadSeed: bigint;
  readonly workloadSpec: string;
  readonly serverType: string;
  readonly model: string;
  readonly rttMs: number;
  readonly goodput: ReadonlyMap<string, SloDimTargets> | null;
  readonly observedKv: TraceObservedKvMetrics | null;
}

/** RFC 3339 in UTC without fractional seconds (Go's time.RFC3339 of a UTC time). */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function observeHeader(h: ObserveHeaderInput): TraceHeader {
  const t = emptyTraceHeader();
  t.traceVersion = 3;
  t.timeUnit = 'us';
  t.createdAt = rfc3339(h.createdAt);
  t.mode = 'real';
  t.warmUpRequests = h.warmUpRequests;
  t.workloadSeed = h.workloadSeed;
  t.workloadSpec = h.workloadSpec;
  t.server = { type: h.serverType, model: h.model, tensorParallel: 0, maxNumSeqs: 0, blockSize: 0, gpuMemoryUtilization: 0, maxModelLen: 0 };
  t.network = { measuredRttMs: h.rttMs };
  if (h.goodput !== null) t.goodputSloTargets = new Map(h.goodput);
  t.observedKvMetrics = h.observedKv;
  return t;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const a = sorted[lo] as number;
  return a + (rank - lo) * ((sorted[hi] as number) - a);
}

/** The stdout summary: latency statistics (ms) of the successful requests and the status counts. */
export function observeSummary(observed: readonly ObservedRequest[], wallSec: number): Record<string, unknown> {
  const ttft: number[] = [];
  const e2e: number[] = [];
  const itl: number[] = [];
  let tokens = 0;
  const status = { ok: 0, error: 0, timeout: 0 };
  for (const o of observed) {
    status[o.result.status]++;
    const r = o.result;
    if (r.status !== 'ok') continue;
    const t = r.firstChunkTimeUs - r.sendTimeUs;
    const e = r.lastChunkTimeUs - r.sendTimeUs;
    if (t <= 0 || e <= 0 || e < t) continue;
    ttft.push(t);
    e2e.push(e);
    tokens += r.outputTokens;
    for (let i = 1; i < r.chunkTimes.length; i++) {
      const d = (r.chunkTimes[i] as number) - (r.chunkTimes[i - 1] as number);
      if (d > 0) itl.push(d);
    }
  }
  const stats = (name: string, v: number[]): Record<string, number> => {
    v.sort((a, b) => a - b);
    const mean = v.length === 0 ? 0 : v.reduce((s, x) => s + x, 0) / v.length / 1000;
    return { [`${name}_mean_ms`]: mean, [`${name}_p50_ms`]: percentile(v, 50) / 1000, [`${name}_p90_ms`]: percentile(v, 90) / 1000, [`${name}_p95_ms`]: percentile(v, 95) / 1000, [`${name}_p99_ms`]: percentile(v, 99) / 1000 };
  };
  return {
    observe_metrics: {
      dispatched_requests: observed.length,
      status_counts: status,
      completed_requests: ttft.length,
      ...stats('ttft', ttft),
      ...stats('e2e', e2e),
      ...stats('itl', itl),
      responses_per_sec: wallSec > 0 ? ttft.length / wallSec : 0,
      tokens_per_sec: wallSec > 0 ? tokens / wallSec : 0,
      wall_clock_s: wallSec,
    },
  };
}
