/**
 * `blis run --trace-output` (and `blis replay --trace-output`): turning finished requests into TraceV2 rows.
 *
 * The reference records every fresh cluster arrival, in the order the arrival events execute (not session
 * re-injections, nothing beyond the horizon), keeps a pointer to each request, and converts them after the run
 * (`RequestsToTraceRecords`), so each row reflects the request's state when the simulation stopped:
 *
 * | request at end of run                        | status       | first/last chunk                    |
 * |----------------------------------------------|--------------|-------------------------------------|
 * | completed                                    | `ok`         | arrival + TTFT / + TTFT + ΣITL      |
 * | timed out after its first token              | `timeout`    | arrival + TTFT / + TTFT + ΣITL      |
 * | timed out before its first token             | `timeout`    | 0 / 0                               |
 * | still running with a first token (horizon)   | `incomplete` | arrival + TTFT / + TTFT + ΣITL so far |
 * | rejected, dropped, queued, or preempted back to no first token | `incomplete` | 0 / 0 |
 *
 * The last chunk deliberately leaves out the post-decode overhead, so it is not arrival + E2E.
 */
import type { Request } from '../domain/request.js';
import { RequestState } from '../domain/request.js';
import { emptyTraceHeader, emptyTraceRecord } from './tracev2-types.js';
import type { SloDimTargets, TraceHeader, TraceKvOffloadConfig, TraceObservedKvMetrics, TraceRecord } from './tracev2-types.js';

/** What the export needs to know about how an arrived request ended. */
export interface ArrivalOutcome {
  /** Final lifecycle state: Completed → "ok", TimedOut → "timeout", anything else → "incomplete". */
  readonly state: RequestState;
  /** Whether the (latest attempt of the) request produced its first token; preemption clears it. */
  readonly ttftSet: boolean;
  /** Time from arrival to the first token, in ticks; meaningful only when `ttftSet`. */
  readonly firstTokenTime: number;
  /** Sum of the inter-token latencies recorded for the current attempt, in ticks. */
  readonly itlSum: number;
}

export interface TraceArrival {
  readonly request: Request;
  readonly outcome: ArrivalOutcome;
}

/** The outcome as read from the request's own lifecycle fields, for engines that keep them up to date. */
export function outcomeFromRequest(req: Request): ArrivalOutcome {
  return { state: req.state, ttftSet: req.ttftSet, firstTokenTime: req.firstTokenTime, itlSum: req.itlSum };
}

function statusOf(state: RequestState): string {
  if (state === RequestState.Completed) return 'ok';
  if (state === RequestState.TimedOut) return 'timeout';
  return 'incomplete';
}

/**
 * The row fields a request itself determines: tags, lengths (input_tokens is the suffix after the prefix
 * group's prefix) and deadline. Inconsistent prefix metadata records the whole input and a zero prefix length,
 * as the reference does. Run export and observe both start from this.
 */
export function recordFromRequest(req: Request, requestId: number): TraceRecord {
  const r = emptyTraceRecord();
  let prefixLength = req.prefixLength;
  let inputTokens = req.inputLen - prefixLength;
  if (inputTokens < 0) {
    inputTokens = req.inputLen;
    prefixLength = 0;
  }
  r.requestId = requestId;
  r.clientId = req.clientId;
  r.tenantId = req.tenantId;
  r.sloClass = req.sloClass;
  r.sessionId = req.sessionId;
  r.roundIndex = req.roundIndex;
  r.prefixGroup = req.prefixGroup;
  r.prefixLength = prefixLength;
  r.streaming = req.streaming;
  r.inputTokens = inputTokens;
  r.outputTokens = req.outputLen;
  r.textTokens = req.textTokens;
  r.imageTokens = req.imageTokens;
  r.audioTokens = req.audioTokens;
  r.videoTokens = req.videoTokens;
  r.reasonRatio = req.reasonRatio;
  r.model = req.model;
  r.deadlineUs = req.deadline;
  r.sloTargetUs = req.sloTargetUs;
  r.adapter = req.adapter;
  return r;
}

/** One row per arrival, `request_id` = position in `arrivals` (not the request's own id). */
export function buildRunTraceRecords(arrivals: readonly TraceArrival[]): TraceRecord[] {
  return arrivals.map(({ request: req, outcome }, i) => {
    const r = recordFromRequest(req, i);
    r.arrivalTimeUs = req.arrivalTime;
    r.sendTimeUs = req.arrivalTime;
    if (outcome.ttftSet) {
      r.firstChunkTimeUs = req.arrivalTime + outcome.firstTokenTime;
      r.lastChunkTimeUs = req.arrivalTime + outcome.firstTokenTime + outcome.itlSum;
    }
    r.status = statusOf(outcome.state);
    return r;
  });
}

/** Convenience for callers whose requests carry their final state themselves. */
export function buildRunTraceRecordsFromRequests(arrivals: readonly Request[]): TraceRecord[] {
  return buildRunTraceRecords(arrivals.map((request) => ({ request, outcome: outcomeFromRequest(request) })));
}

export interface RunTraceHeaderOptions {
  /** The workload seed (`--seed`, or the spec's seed when `--seed` was not given with `--workload-spec`). */
  readonly workloadSeed: bigint;
  /** Resolved goodput targets (CLI flags over the workload spec); empty = omitted. */
  readonly goodputSloTargets?: ReadonlyMap<string, SloDimTargets>;
  /** Resolved KV offload config; absent when no `--kv-offload-config` was given. */
  readonly kvOffload?: TraceKvOffloadConfig | null;
}

/**
 * The header `blis run` writes. It records neither the workload spec path, the preset name, nor the server
 * config, and never a creation time, so identical runs give identical files.
 */
export function buildRunTraceHeader(opts: RunTraceHeaderOptions): TraceHeader {
  const h = emptyTraceHeader();
  h.traceVersion = 3;
  h.timeUnit = 'microseconds';
  h.mode = 'generated';
  h.workloadSeed = opts.workloadSeed;
  h.goodputSloTargets = new Map(opts.goodputSloTargets ?? []);
  h.kvOffload = opts.kvOffload ?? null;
  return h;
}

export interface ReplayTraceHeaderOptions {
  readonly goodputSloTargets?: ReadonlyMap<string, SloDimTargets>;
  readonly kvOffload?: TraceKvOffloadConfig | null;
  /** Carried over verbatim from the input trace's header. */
  readonly observedKvMetrics?: TraceObservedKvMetrics | null;
}

/** The header `blis replay --trace-output` writes: mode "replayed" and no workload seed. */
export function buildReplayTraceHeader(opts: ReplayTraceHeaderOptions): TraceHeader {
  const h = emptyTraceHeader();
  h.traceVersion = 3;
  h.timeUnit = 'microseconds';
  h.mode = 'replayed';
  h.goodputSloTargets = new Map(opts.goodputSloTargets ?? []);
  h.kvOffload = opts.kvOffload ?? null;
  h.observedKvMetrics = opts.observedKvMetrics ?? null;
  return h;
}
