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
