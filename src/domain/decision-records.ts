/**
 * Decision-trace records (the reference's `sim/trace` data types, blis-cluster.md §4): plain data appended
 * in execution order when `--trace-level decisions` is on, and summarised by `--summarize-trace`.
 */

export interface AdmissionRecord {
  readonly requestId: string;
  /** Simulation clock (ticks) of the decision. */
  readonly clock: number;
  readonly admitted: boolean;
  readonly reason: string;
  /** A DELAY decision: the µs until the request re-enters admission (absent = not delayed). */
  readonly delayUs?: number;
}

/** A priority policy's decision (`--trace-level decisions`, only when a priority policy is configured). */
export interface PriorityRecord {
  readonly requestId: string;
  readonly clock: number;
  readonly score: number;
  readonly hints: Readonly<Record<string, string | number | boolean>> | null;
}

/** One counterfactual candidate with the state it was scored on. */
export interface CandidateScore {
  readonly instanceId: string;
  readonly score: number;
  readonly queueDepth: number;
  readonly batchSize: number;
  readonly inFlightRequests: number;
  readonly kvUtilization: number;
  readonly freeKVBlocks: number;
}

export interface RoutingRecord {
  readonly requestId: string;
  readonly clock: number;
  readonly chosenInstance: string;
  readonly reason: string;
  /** The policy's per-instance scores (a copy), or null when it returned none. */
  readonly scores: ReadonlyMap<string, number> | null;
  /** Top-k candidates by score desc, id asc; null when counterfactual-k is 0 or the chosen one is unknown. */
  readonly candidates: readonly CandidateScore[] | null;
  /** max(0, best score − chosen score). */
  readonly regret: number;
  /** ShadowKV predicted a prefix hit on the chosen instance (present when the router keeps ShadowKV). */
  readonly expectedCacheHit?: boolean;
  /** The chosen instance held at least one leading block of the request when it was routed. */
  readonly cacheHit?: boolean;
  /** Instances the policy filtered out. */
  readonly filteredOut?: readonly string[];
}

/** The records of one run, each list in execution order. */
export interface DecisionTrace {
  readonly admissions: readonly AdmissionRecord[];
  readonly routings: readonly RoutingRecord[];
}

/** P/D: the disaggregation decider's verdict for one request (reference DisaggregationRecord). */
export interface DisaggregationRecord {
  readonly requestId: string;
  readonly clock: number;
  readonly disaggregate: boolean;
  /** The decode instance chosen before the decision (beyond the reference: for reflection). */
  readonly decodeInstance: string;
  readonly reason: string;
}

/** P/D: where a prefill half was routed (reference PrefillRoutingRecord). */
export interface PrefillRoutingRecord {
  readonly parentRequestId: string;
  readonly clock: number;
  readonly chosenInstance: string;
  readonly scores: ReadonlyMap<string, number> | null;
  readonly candidates: readonly CandidateScore[] | null;
  readonly regret: number;
}

/** E/P/D: the encode pod a request was routed to (reference EncodeRoutingRecord, the same fields; no encode work is simulated). */
export type EncodeRoutingRecord = PrefillRoutingRecord;

/** P/D: one KV transfer that reached its decode instance (reference KVTransferRecord). */
export interface KVTransferRecord {
  readonly parentRequestId: string;
  readonly transferStartTime: number;
  readonly transferDuration: number;
  readonly numKVBlocks: number;
  readonly prefillInstanceId: string;
  readonly decodeInstanceId: string;
}

/** Autoscaler: one replica added or drained, or a scale decision that could not be carried out. */
export interface ScaleRecord {
  readonly clock: number;
  /** Model or deployment configuration the decision was for. */
  readonly target: string;
  readonly action: 'up' | 'down' | 'failed';
  readonly instanceId: string;
  /** Replicas (routable + loading) of the target after the action. */
  readonly replicas: number;
  readonly reason: string;
}
