/**
 * Admission and routing contracts (reference blis-cluster.md §2.1, §3).
 *
 * Policies read a {@link RouterState} the cluster builds for each decision and return a decision; they never
 * touch instances. Some policies keep private memory across calls (round-robin's counter, the token bucket's
 * level, the prefix-affinity LRU index, the no-hit-lru recency list) exactly as the reference does, because
 * that memory is part of the simulated router; everything the cluster owns stays with the cluster.
 *
 * Contract with the cluster (what the caller must provide):
 * - `state.snapshots` holds one {@link RoutingSnapshot} per routable instance (Active or WarmingUp, filtered by
 *   the request's model when it has one), in the cluster's instance order. Order matters: ties are broken by
 *   position (always-busiest) or by `rng.intn` over positions (least-loaded, weighted).
 * - `inFlightRequests` must be the live router-side count (never a stale snapshot value).
 * - Routing is only called with at least one snapshot; an empty list throws (the cluster counts a routing
 *   rejection instead of calling).
 * - `RoutingDecision.target` indexes `state.snapshots`; `targetId` is that snapshot's id.
 */
import type { Request } from '../domain/request.js';
import type { PrefixCacheIndex } from './prefix-index.js';

/** What the router knows about one instance when it decides (the reference's RoutingSnapshot). */
export interface RoutingSnapshot {
  readonly id: string;
  /** Wait-queue length. */
  readonly queueDepth: number;
  /** Running-batch size. */
  readonly batchSize: number;
  /** Used / total KV blocks, in [0, 1]. */
  readonly kvUtilization: number;
  readonly freeKVBlocks: number;
  readonly cacheHitRate: number;
  /** Requests routed here and not yet finished (router-side, always live). */
  readonly inFlightRequests: number;
  /** Cumulative preemptions since the instance started. */
  readonly preemptionCount: number;
  readonly model: string;
  readonly gpuType: string;
  readonly tpDegree: number;
  readonly costPerHour: number;
  /** Total KV capacity in tokens (total blocks × block size). */
  readonly totalKvCapacityTokens: number;
  /** KV tokens in use (used blocks × block size). */
  readonly kvTokensInUse: number;
  readonly maxBatchSize: number;
  /** LoRA adapters resident on the instance; null = none (the lora-affinity scorer is then neutral). */
  readonly residentAdapters: ReadonlySet<string> | null;
  /** Mean TTFT (ms) of the last requests that got their first token here (0 before any). */
  readonly recentTtftMs: number;
  /** Mean inter-token latency (ms) of the last requests that completed here (0 before any). */
  readonly recentTpotMs: number;
  /** Free seats: max(0, max batch size − batch size − queue depth). */
  readonly availableCapacity: number;
  /** Estimated wait of a new arrival (ms): queued prefill tokens / token budget × recent step time. */
  readonly estimatedWaitMs: number;
}

const ZERO_SNAPSHOT: Omit<RoutingSnapshot, 'id'> = {
  queueDepth: 0,
  batchSize: 0,
  kvUtilization: 0,
  freeKVBlocks: 0,
  cacheHitRate: 0,
  inFlightRequests: 0,
  preemptionCount: 0,
  model: '',
  gpuType: '',
  tpDegree: 0,
  costPerHour: 0,
  totalKvCapacityTokens: 0,
  kvTokensInUse: 0,
  maxBatchSize: 0,
  residentAdapters: null,
  recentTtftMs: 0,
  recentTpotMs: 0,
  availableCapacity: 0,
  estimatedWaitMs: 0,
};

/**
 * A snapshot with every field zero except those given. Zero is the meaningful initial value: a periodic
 * snapshot reads all zeros until its first refresh.
 */
export function routingSnapshot(id: string, fields: Partial<Omit<RoutingSnapshot, 'id'>> = {}): RoutingSnapshot {
  if (id === '') throw new RangeError('routingSnapshot: id must not be empty');
  return { ...ZERO_SNAPSHOT, ...fields, id };
}

/** QueueDepth + BatchSize + InFlightRequests: the load figure every load-based policy and fallback uses. */
export function effectiveLoad(s: RoutingSnapshot): number {
  return s.queueDepth + s.batchSize + s.inFlightRequests;
}

export interface RouterState {
  /** One per routable instance, in cluster instance order (see the module contract). */
  readonly snapshots: readonly RoutingSnapshot[];
  /** Simulation clock (µs) at the decision. */
  readonly clock: number;
  /**
   * Instances still loading (only id, model, gpuType, tpDegree, costPerHour and totalKvCapacityTokens are
   * meaningful). No admission or routing policy reads it; it exists for the autoscaler's collector.
   */
  readonly loadingSnapshots?: readonly RoutingSnapshot[];
  /**
   * The richer router state of policy-search-design §3 (tenants, global rates, history, ObservedKV,
   * ShadowKV), read lazily; present when the cluster maintains it (an external policy is configured or
   * decisions are traced). Built-in policies never read it.
   */
  readonly signals?: RouterSignals | null;
}

/** Per-tenant router state (policy-search-design §3 TenantState). */
export interface TenantSignal {
  /** Requests of the tenant seen by admission so far. */
  readonly requestCount: number;
  /** Routed and not yet finished. */
  readonly activeRequests: number;
  /** Arrivals per second over the recent window. */
  readonly recentRate: number;
  /** SLO class of the tenant's latest request. */
  readonly sloClass: string;
  /** recentRate above the burst factor × the tenant's long-run rate (see RouterSignalsConfig). */
  readonly burstDetected: boolean;
}

export interface GlobalSignal {
  /** Routed and not yet finished, all instances. */
  readonly inFlight: number;
  /** Arrivals per second over the recent window. */
  readonly requestRate: number;
  /** Output tokens per second completed over the recent window. */
  readonly throughput: number;
  readonly completedRequests: number;
  readonly rejectedRequests: number;
  /** Requests waiting out an admission DELAY now. */
  readonly delayedRequests: number;
}

/** One closed window of the router's history (oldest first). */
export interface HistoryWindow {
  readonly startUs: number;
  readonly arrivals: number;
  readonly completions: number;
  readonly rejections: number;
}

/** ObservedKV (authoritative, subject to snapshot staleness): per-tier utilization and rates. */
export interface ObservedKvSignal {
  readonly gpuUtilization: number;
  readonly cpuUtilization: number;
  readonly gpuFreeBlocks: number;
  readonly cpuFreeBlocks: number;
  readonly hitRate: number;
  /** Blocks offloaded GPU->CPU per second over the recent window. */
  readonly offloadRate: number;
  /** Blocks reloaded CPU->GPU per second over the recent window. */
  readonly reloadRate: number;
  /** Storage tier (docs/kv-tiers.md; all 0 without one): used / capacity, free blocks. */
  readonly storageUtilization: number;
  readonly storageFreeBlocks: number;
  /** Blocks written CPU->storage and read storage->GPU per second over the recent window. */
  readonly storageOffloadRate: number;
  readonly storageReloadRate: number;
}

/** ShadowKV: the router's own prediction of prefix placement on one instance, for one request. */
export interface ShadowKvSignal {
  /** Leading full blocks of the request predicted cached there. */
  readonly matchedBlocks: number;
  /** Blocks the shadow model tracks there / the instance's GPU blocks. */
  readonly estimatedUtilization: number;
  readonly trackedBlocks: number;
}

/** Lazily computed router state; `index` is a position in `RouterState.snapshots`. */
export interface RouterSignals {
  tenant(id: string): TenantSignal;
  /** Tenants seen so far, sorted. */
  tenantIds(): readonly string[];
  global(): GlobalSignal;
  history(): readonly HistoryWindow[];
  observedKv(index: number): ObservedKvSignal;
  shadowKv(index: number, req: Request): ShadowKvSignal;
  /** Leading input blocks of `req` cached on the instance as the router sees it (cache-signal staleness). */
  cachedPrefixBlocks(index: number, req: Request): number;
}

export interface AdmissionDecision {
  readonly admitted: boolean;
  /** Goes into decision traces verbatim; '' on a plain admission. */
  readonly reason: string;
  /**
   * DELAY(µs): with `admitted` false and a positive delay the request is not rejected but re-enters
   * admission after the delay (counted as delayed meanwhile). Absent or 0 = no delay.
   */
  readonly delayUs?: number;
}

export interface AdmissionPolicy {
  readonly name: string;
  admit(req: Request, state: RouterState): AdmissionDecision;
}

/** One scorer's share of a weighted decision. */
export interface ScorerContribution {
  readonly scorer: string;
  /** Normalised weight (the weights of one policy sum to 1). */
  readonly weight: number;
  /** The scorer's values clamped to [0, 1], aligned with `state.snapshots`; composite = Σ weight × value. */
  readonly values: Float64Array;
}

export interface RoutingDecision {
  /** Index into `state.snapshots`. */
  readonly target: number;
  /** `state.snapshots[target].id`. */
  readonly targetId: string;
  /** Goes into decision traces verbatim. */
  readonly reason: string;
  /** Composite score per instance id when the policy scores (weighted); null otherwise. */
  readonly scores: ReadonlyMap<string, number> | null;
  /** Per-scorer breakdown behind `scores` (weighted only); null otherwise. */
  readonly breakdown: readonly ScorerContribution[] | null;
  /** Instance ids the policy eliminated before scoring (absent = none). */
  readonly filteredOut?: readonly string[];
  /**
   * Scores on the objective counterfactual regret is measured on, when that is not `scores` (absent = `scores`,
   * or −EffectiveLoad without scores). Only corrected least-loaded sets it: its own scores are the load it
   * minimised, so regret on them would always be 0.
   */
  readonly regretScores?: ReadonlyMap<string, number>;
}

/** What a priority policy returns (policy-search-design §3 PriorityPolicy). */
export interface PriorityDecision {
  /** Higher = more urgent. Becomes the request's instance scheduling priority. */
  readonly score: number;
  /** Free-form hints passed to the instance scheduler (plain data). */
  readonly hints: Readonly<Record<string, string | number | boolean>> | null;
}

export interface PriorityPolicy {
  readonly name: string;
  prioritize(req: Request, state: RouterState): PriorityDecision;
}

export interface RoutingPolicy {
  readonly name: string;
  route(req: Request, state: RouterState): RoutingDecision;
  /**
   * The router-side prefix index of the policy's one prefix-affinity scorer, which records every routed request on
   * its target as the decision is made (weighted only; absent otherwise). The cluster may let it follow ShadowKV's
   * index, which records the same blocks on delivery (PrefixCacheIndex.follow).
   */
  readonly prefixIndex?: PrefixCacheIndex;
}

/**
 * The slice of Go's *rand.Rand the router uses for tie-breaks. The cluster passes the "router" partition's
 * GoRand (or "prefill-router"/"decode-router" for the PD pool policies); null means positional tie-breaks.
 */
export interface TieBreakRng {
  intn(n: number): number;
}

/**
 * Number of consecutive leading full input blocks of `req` cached on instance `instanceId` (live in oracle
 * mode, the periodic copy in stale mode). Must return 0 for an id it does not know, which is how the
 * reference treats an instance missing from its query map.
 */
export type CachedBlocksFn = (instanceId: string, req: Request) => number;

/** A scoring dimension of the weighted policy. */
export interface Scorer {
  readonly name: string;
  /** One value per snapshot, aligned by position; nominally in [0, 1] (the weighted policy clamps). */
  score(req: Request, snapshots: readonly RoutingSnapshot[]): Float64Array;
  /** Records the final routing choice (after tie-break); null for stateless scorers. */
  readonly observe: ((req: Request, targetId: string) => void) | null;
  /** prefix-affinity: the index `observe` records into. */
  readonly prefixIndex?: PrefixCacheIndex;
}
