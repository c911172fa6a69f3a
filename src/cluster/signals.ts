/**
 * The router's own state beyond instance snapshots (policy-search-design §3): per-tenant and global rates,
 * a short history, ObservedKV per instance, and ShadowKV — the router's prediction of where prefixes are
 * cached, learned only from its own routing decisions with an LRU eviction model as large as each
 * instance's GPU cache. The cluster feeds it events; policies read it lazily through {@link RouterSignals}.
 *
 * Everything is a deterministic function of the event sequence (no wall clock, no unordered iteration:
 * tenant ids are reported sorted). Rates are over a sliding window of `windowUs`; history windows are fixed,
 * aligned to multiples of `windowUs`.
 */
import { inputBlockHashes } from '../domain/block-hash.js';
import type { Request } from '../domain/request.js';
import type { Instance } from '../instance/instance.js';
import { PrefixCacheIndex } from '../routing/prefix-index.js';
import type { GlobalSignal, HistoryWindow, ObservedKvSignal, RouterSignals, RoutingSnapshot, ShadowKvSignal, TenantSignal } from '../routing/types.js';

export interface SignalsConfig {
  /** Sliding window of the recent rates and length of one history window (µs). */
  readonly windowUs: number;
  /** Closed history windows kept. */
  readonly historyWindows: number;
  /** A tenant bursts when its recent rate exceeds this factor times its long-run rate ... */
  readonly burstFactor: number;
  /** ... and it sent at least this many requests in the window. */
  readonly burstMinRequests: number;
}

export const DEFAULT_SIGNALS_CONFIG: SignalsConfig = { windowUs: 1_000_000, historyWindows: 10, burstFactor: 3, burstMinRequests: 5 };

/** Timestamps in a sliding window (a deque over a growing array, compacted now and then). */
class Window {
  private times: number[] = [];
  private weights: number[] = [];
  private head = 0;
  private sum = 0;
  push(t: number, w = 1): void {
    this.times.push(t);
    this.weights.push(w);
    this.sum += w;
  }
  /** Sum of weights with time in (now - span, now]. */
  total(now: number, span: number): number {
    const cutoff = now - span;
    while (this.head < this.times.length && (this.times[this.head] as number) <= cutoff) {
      this.sum -= this.weights[this.head] as number;
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.weights = this.weights.slice(this.head);
      this.head = 0;
    }
    return this.sum;
  }
}

interface TenantState {
  requestCount: number;
  activeRequests: number;
  sloClass: string;
  firstArrival: number;
  readonly recent: Window;
}

interface KvSample {
  time: number;
  offloads: number;
  reloads: number;
  offloadRate: number;
  reloadRate: number;
  storageOffloads: number;
  storageReloads: number;
  storageOffloadRate: number;
  storageReloadRate: number;
}

function newKvSample(time: number): KvSample {
  return { time, offloads: 0, reloads: 0, offloadRate: 0, reloadRate: 0, storageOffloads: 0, storageReloads: 0, storageOffloadRate: 0, storageReloadRate: 0 };
}

export class RouterSignalsTracker implements RouterSignals {
  private readonly tenants = new Map<string, TenantState>();
  private sortedTenantIds: string[] | null = [];
  private readonly arrivals = new Window();
  private readonly completedTokens = new Window();
  private inFlight = 0;
  private completed = 0;
  private rejected = 0;
  private delayed = 0;
  private readonly closed: HistoryWindow[] = [];
  private windowStart = 0;
  private cur = { arrivals: 0, completions: 0, rejections: 0 };
  private clock = 0;
  readonly shadow: PrefixCacheIndex;
  private readonly kvSamples: KvSample[];
  /** The decision being built: snapshots and their instance indexes. */
  private snaps: readonly RoutingSnapshot[] = [];
  private positions: readonly number[] = [];

  constructor(
    private readonly instances: readonly Instance[],
    private readonly cachedBlocksOf: (instanceIndex: number, req: Request) => number,
    private readonly cfg: SignalsConfig = DEFAULT_SIGNALS_CONFIG,
  ) {
    const maxBlocks = instances.reduce((m, i) => Math.max(m, i.kv.totalBlocks), 1);
    this.shadow = new PrefixCacheIndex(maxBlocks);
    this.kvSamples = instances.map(() => newKvSample(0));
  }

  /** An instance joined the cluster (appended to the shared instance list). */
  addInstance(): void {
    this.kvSamples.push(newKvSample(this.clock));
  }

  /** What a decision's state build does first (history windows closed up to `clock`), without the decision. */
  observeClock(clock: number): void {
    this.advance(clock);
  }

  /** Sets the decision the lazy reads refer to; `positions[k]` is the instance index of `snaps[k]`. */
  beginDecision(clock: number, snaps: readonly RoutingSnapshot[], positions: readonly number[]): void {
    this.advance(clock);
    this.snaps = snaps;
    this.positions = positions;
  }

  // ---- events --------------------------------------------------------------------------------------

  /** A request's first admission decision. */
  onArrival(req: Request, clock: number): void {
    this.advance(clock);
    this.arrivals.push(clock);
    this.cur.arrivals++;
    let t = this.tenants.get(req.tenantId);
    if (t === undefined) {
      t = { requestCount: 0, activeRequests: 0, sloClass: '', firstArrival: clock, recent: new Window() };
      this.tenants.set(req.tenantId, t);
      this.sortedTenantIds = null;
    }
    t.requestCount++;
    t.sloClass = req.sloClass;
    t.recent.push(clock);
  }

  onRejected(clock: number): void {
    this.advance(clock);
    this.rejected++;
    this.cur.rejections++;
  }

  onDelayStart(): void {
    this.delayed++;
  }

  onDelayEnd(): void {
    this.delayed--;
  }

  /** Routed to `instanceIndex`: in flight, and the shadow model learns the request's prefix is there. */
  onRouted(req: Request, instanceIndex: number, blockSize: number): void {
    this.inFlight++;
    const t = this.tenants.get(req.tenantId);
    if (t !== undefined) t.activeRequests++;
    this.shadow.recordBlocks(inputBlockHashes(req, blockSize), (this.instances[instanceIndex] as Instance).id);
  }

  /** A routed request left its instance (completed or not). */
  onDone(req: Request, clock: number): void {
    this.advance(clock);
    this.inFlight = Math.max(0, this.inFlight - 1);
    const t = this.tenants.get(req.tenantId);
    if (t !== undefined && t.activeRequests > 0) t.activeRequests--;
    if (req.outcome === 'completed') {
      this.completed++;
      this.cur.completions++;
      this.completedTokens.push(clock, Math.max(0, req.progressIndex - req.inputLen) + (req.outputLen > 0 ? 1 : 0));
    }
  }

  /** Closes history windows up to `clock` and samples KV transfer counters at each boundary. */
  private advance(clock: number): void {
    if (clock < this.clock) return;
    this.clock = clock;
    const w = this.cfg.windowUs;
    while (clock >= this.windowStart + w) {
      this.closed.push({ startUs: this.windowStart, ...this.cur });
      if (this.closed.length > this.cfg.historyWindows) this.closed.shift();
      this.cur = { arrivals: 0, completions: 0, rejections: 0 };
      this.windowStart += w;
      const end = this.windowStart;
      this.instances.forEach((inst, i) => {
        const s = this.kvSamples[i] as KvSample;
        const st = inst.kv.tierStats();
        const secs = (end - s.time) / 1e6;
        s.offloadRate = secs > 0 ? (st.offloads - s.offloads) / secs : 0;
        s.reloadRate = secs > 0 ? (st.reloads - s.reloads) / secs : 0;
        s.time = end;
        s.offloads = st.offloads;
        s.reloads = st.reloads;
        if (st.storageTotalBlocks !== undefined) {
          const so = st.storageOffloads ?? 0;
          const sr = st.storageReloads ?? 0;
          s.storageOffloadRate = secs > 0 ? (so - s.storageOffloads) / secs : 0;
          s.storageReloadRate = secs > 0 ? (sr - s.storageReloads) / secs : 0;
          s.storageOffloads = so;
          s.storageReloads = sr;
        }
      });
      // A long idle gap: jump whole windows at once (nothing happened in them).
      if (clock >= this.windowStart + w * (this.cfg.historyWindows + 2)) {
        const skip = Math.floor((clock - this.windowStart) / w) - this.cfg.historyWindows;
        if (skip > 0) this.windowStart += skip * w;
      }
    }
  }

  // ---- RouterSignals ---------------------------------------------------------------------------------

  tenant(id: string): TenantSignal {
    const t = this.tenants.get(id);
    if (t === undefined) return { requestCount: 0, activeRequests: 0, recentRate: 0, sloClass: '', burstDetected: false };
    const span = this.cfg.windowUs;
    const recentCount = t.recent.total(this.clock, span);
    const recentRate = recentCount / (span / 1e6);
    const elapsed = this.clock - t.firstArrival;
    const longRun = elapsed >= span ? t.requestCount / (elapsed / 1e6) : recentRate;
    return {
      requestCount: t.requestCount,
      activeRequests: t.activeRequests,
      recentRate,
      sloClass: t.sloClass,
      burstDetected: recentCount >= this.cfg.burstMinRequests && elapsed >= span && recentRate > this.cfg.burstFactor * longRun,
    };
  }

  tenantIds(): readonly string[] {
    if (this.sortedTenantIds === null) this.sortedTenantIds = [...this.tenants.keys()].sort();
    return this.sortedTenantIds;
  }

  global(): GlobalSignal {
    const secs = this.cfg.windowUs / 1e6;
    return {
      inFlight: this.inFlight,
      requestRate: this.arrivals.total(this.clock, this.cfg.windowUs) / secs,
      throughput: this.completedTokens.total(this.clock, this.cfg.windowUs) / secs,
      completedRequests: this.completed,
      rejectedRequests: this.rejected,
      delayedRequests: this.delayed,
    };
  }

  history(): readonly HistoryWindow[] {
    return this.closed;
  }

  observedKv(index: number): ObservedKvSignal {
    const s = this.snaps[index] as RoutingSnapshot;
    const i = this.positions[index] as number;
    const st = (this.instances[i] as Instance).kv.tierStats();
    const sample = this.kvSamples[i] as KvSample;
    return {
      gpuUtilization: s.kvUtilization,
      cpuUtilization: st.cpuTotalBlocks === 0 ? 0 : st.cpuUsedBlocks / st.cpuTotalBlocks,
      gpuFreeBlocks: s.freeKVBlocks,
      cpuFreeBlocks: st.cpuTotalBlocks - st.cpuUsedBlocks,
      hitRate: s.cacheHitRate,
      offloadRate: sample.offloadRate,
      reloadRate: sample.reloadRate,
      storageUtilization: st.storageTotalBlocks === undefined || st.storageTotalBlocks === 0 ? 0 : (st.storageUsedBlocks ?? 0) / st.storageTotalBlocks,
      storageFreeBlocks: st.storageTotalBlocks === undefined ? 0 : st.storageTotalBlocks - (st.storageUsedBlocks ?? 0),
      storageOffloadRate: sample.storageOffloadRate,
      storageReloadRate: sample.storageReloadRate,
    };
  }

  shadowKv(index: number, req: Request): ShadowKvSignal {
    const i = this.positions[index] as number;
    const inst = this.instances[i] as Instance;
    const tracked = this.shadow.instanceBlockCount(inst.id);
    return {
      matchedBlocks: this.shadow.matchLength(inputBlockHashes(req, inst.kv.blockSize), inst.id),
      estimatedUtilization: tracked / Math.max(inst.kv.totalBlocks, 1),
      trackedBlocks: tracked,
    };
  }

  cachedPrefixBlocks(index: number, req: Request): number {
    return this.cachedBlocksOf(this.positions[index] as number, req);
  }
}
