/**
 * What the router sees of each instance, and how stale it is (reference blis-cluster.md §3.6, INV-7).
 *
 * `--snapshot-refresh-interval` > 0 makes queue depth, batch size, KV utilisation (with free blocks, cache hit
 * rate, KV tokens), preemption count and the resident LoRA adapters Periodic: each field of each instance is re-read on a query only when
 * `clock - lastRefresh >= interval`, and lastRefresh starts at 0 — so until the first query at or after one
 * interval every Periodic field reads zero, as in the reference (corrected semantics, M5: the view starts as a
 * scrape of the instance when it joins, at t = 0 for the startup instances). 0 = Immediate (oracle). `--cache-signal-delay`
 * > 0 likewise freezes the prefix-cache view, re-frozen for all instances together at the start of a router
 * state build once the delay has elapsed. In-flight counts are the router's own and always live.
 */
import type { Request } from '../domain/request.js';
import type { Instance } from '../instance/instance.js';
import type { RoutingSnapshot } from '../routing/types.js';

interface Cached {
  queueDepth: number;
  batchSize: number;
  kvUtilization: number;
  freeKVBlocks: number;
  cacheHitRate: number;
  totalKvCapacityTokens: number;
  kvTokensInUse: number;
  preemptionCount: number;
  recentTtftMs: number;
  recentTpotMs: number;
  estimatedWaitMs: number;
  /** LoRA adapters resident when last read (null = none resident, or LoRA off). */
  residentAdapters: ReadonlySet<string> | null;
  // lastRefresh per field group (ticks)
  tQueue: number;
  tBatch: number;
  tKv: number;
  tPreempt: number;
  tAdapters: number;
}

/** What an instance reports that never changes during its life. */
export interface StaticFacts {
  readonly model: string;
  readonly gpuType: string;
  readonly tpDegree: number;
  readonly maxBatchSize: number;
  /** $/hour of the node pool it was placed on (0 without node pools). */
  readonly costPerHour?: number;
  /** The scaling target (deployment configuration) it belongs to; absent = its model. */
  readonly target?: string;
}

const NO_FACTS: StaticFacts = { model: '', gpuType: '', tpDegree: 0, maxBatchSize: 0 };

function emptyCached(): Cached {
  return {
    queueDepth: 0, batchSize: 0, kvUtilization: 0, freeKVBlocks: 0, cacheHitRate: 0, totalKvCapacityTokens: 0,
    kvTokensInUse: 0, preemptionCount: 0, recentTtftMs: 0, recentTpotMs: 0, estimatedWaitMs: 0, residentAdapters: null,
    tQueue: 0, tBatch: 0, tKv: 0, tPreempt: 0, tAdapters: 0,
  };
}

export class SnapshotProvider {
  private readonly cached: Cached[];
  private cacheLastRefresh = 0;

  /**
   * @param facts per instance (indexes as `instances`); the array is read live, so instances added later
   * (autoscaler) bring their facts with them through {@link addInstance}.
   */
  /**
   * @param scrapeAtJoin corrected semantics (M5): each instance's view starts as a scrape of it when it joins
   * (t = 0 for the startup instances) instead of all zeros, so the router and the autoscaler's first tick see
   * real capacity; the refresh times that follow are the same.
   */
  constructor(
    private readonly instances: readonly Instance[],
    private readonly refreshInterval: number,
    private readonly cacheDelay: number,
    private readonly facts: readonly StaticFacts[] = [],
    private readonly scrapeAtJoin = false,
  ) {
    this.cached = instances.map(() => emptyCached());
    if (scrapeAtJoin) for (let i = 0; i < instances.length; i++) this.refresh(i, 0, true);
    // The reference freezes each instance's cache view when it builds the provider (all empty at t=0).
    if (cacheDelay > 0) for (const inst of instances) inst.kv.takeSnapshot();
  }

  /** An instance joined the cluster (already appended to `instances`) at `clock`: its signals start at zero (reference) or scraped (M5). */
  addInstance(inst: Instance, clock = 0): void {
    this.cached.push(emptyCached());
    if (this.scrapeAtJoin) this.refresh(this.cached.length - 1, clock, true);
    if (this.cacheDelay > 0) inst.kv.takeSnapshot();
  }

  private due(last: number, clock: number): boolean {
    return this.refreshInterval <= 0 || clock - last >= this.refreshInterval;
  }

  /** The router's view of instance `i` at `clock`, with the live in-flight count. */
  snapshot(i: number, clock: number, inFlight: number): RoutingSnapshot {
    const c = this.refresh(i, clock, false);
    const f = this.facts[i] ?? NO_FACTS;
    return {
      id: (this.instances[i] as Instance).id,
      queueDepth: c.queueDepth,
      batchSize: c.batchSize,
      kvUtilization: c.kvUtilization,
      freeKVBlocks: c.freeKVBlocks,
      cacheHitRate: c.cacheHitRate,
      inFlightRequests: inFlight,
      preemptionCount: c.preemptionCount,
      model: f.model,
      gpuType: f.gpuType,
      tpDegree: f.tpDegree,
      costPerHour: f.costPerHour ?? 0,
      totalKvCapacityTokens: c.totalKvCapacityTokens,
      kvTokensInUse: c.kvTokensInUse,
      maxBatchSize: f.maxBatchSize,
      residentAdapters: c.residentAdapters,
      recentTtftMs: c.recentTtftMs,
      recentTpotMs: c.recentTpotMs,
      availableCapacity: Math.max(0, f.maxBatchSize - c.batchSize - c.queueDepth),
      estimatedWaitMs: c.estimatedWaitMs,
    };
  }

  /** What {@link snapshot} does to the provider's state (the due refreshes), without building the snapshot. */
  refreshAt(i: number, clock: number): void {
    this.refresh(i, clock, false);
  }

  /** Re-reads the field groups of instance `i` that are due at `clock` (every group when `all`). */
  private refresh(i: number, clock: number, all: boolean): Cached {
    const inst = this.instances[i] as Instance;
    const c = this.cached[i] as Cached;
    if (all || this.due(c.tPreempt, clock)) {
      c.preemptionCount = inst.metrics.preemptionCount;
      c.tPreempt = clock;
    }
    if (all || this.due(c.tQueue, clock)) {
      c.queueDepth = inst.queueDepth;
      // The latency signals travel with the queue depth (same scrape, same staleness).
      c.recentTtftMs = inst.recentTtftUs / 1000;
      c.recentTpotMs = inst.recentTpotUs / 1000;
      c.estimatedWaitMs = inst.estimatedWaitUs / 1000;
      c.tQueue = clock;
    }
    if (all || this.due(c.tBatch, clock)) {
      c.batchSize = inst.batchSize;
      c.tBatch = clock;
    }
    if (all || this.due(c.tKv, clock)) {
      const kv = inst.kv;
      const used = kv.usedBlocks();
      const total = kv.totalBlocks;
      c.kvUtilization = used / Math.max(total, 1);
      c.freeKVBlocks = total - used;
      c.cacheHitRate = kv.cacheHitRate();
      c.totalKvCapacityTokens = total * kv.blockSize;
      c.kvTokensInUse = used * kv.blockSize;
      c.tKv = clock;
    }
    if (inst.lora !== null && (all || this.due(c.tAdapters, clock))) {
      // A fresh set per read: a periodic snapshot keeps the frozen view until its next refresh.
      c.residentAdapters = inst.lora.resident.size === 0 ? null : new Set(inst.lora.resident.ids());
      c.tAdapters = clock;
    }
    return c;
  }

  /** Re-freezes every instance's cache view once the cache-signal delay has elapsed (start of a state build). */
  refreshCacheIfNeeded(clock: number): void {
    if (this.cacheDelay <= 0 || clock - this.cacheLastRefresh < this.cacheDelay) return;
    for (const inst of this.instances) inst.kv.takeSnapshot();
    this.cacheLastRefresh = clock;
  }

  /** Consecutive cached prefix blocks of `req` on instance `i`: frozen view when delayed, live otherwise. */
  cachedBlocks(i: number, req: Request): number {
    const kv = (this.instances[i] as Instance).kv;
    return this.cacheDelay > 0 ? kv.snapshotPrefixBlocks(req) : kv.cachedPrefixBlocks(req);
  }
}
