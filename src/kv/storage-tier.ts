/**
 * Storage KV tier (local NVMe / remote store, as LMCache's disk backend or llm-d's KV offloading): the third
 * tier below the CPU mirror of {@link TieredKVCache}. Not in the reference; off unless configured.
 *
 * Policy (docs/kv-tiers.md):
 * - Offload on eviction: a block the CPU LRU evicts is written to storage (a block already there is only
 *   refreshed). The storage tier is an LRU of identities too; when full it drops its oldest block.
 * - Reload on a prefix hit: when an allocation's prefix chain leaves the GPU and the CPU tier, blocks found
 *   here are brought back to the GPU through host memory (staged into the CPU tier as most recent), in the
 *   same chain walk as CPU reloads.
 * - Timing: one storage channel per instance with an access latency and a bandwidth. Every transfer (an
 *   allocation's reloads, a step's offloads) is one job on it: start = max(now, channel free), end = start +
 *   latency + bytes / bandwidth. Offloads are asynchronous (nothing waits for them) but hold the channel, so a
 *   reload queued behind them waits. The step that allocates a reload is extended until the reload's end
 *   (the reference charges CPU reloads to the same step the same way).
 *
 * Records every transfer it sees between the three tiers (offload / reload, from / to, blocks, bytes,
 * start / end) and the reload cycles that `cache_thrashing` detection reads.
 */
import { CpuTier } from './cpu-tier.js';

export type KVTierName = 'gpu' | 'cpu' | 'storage';

export interface StorageTierConfig {
  /** Capacity in blocks (> 0). */
  readonly blocks: number;
  /** Bytes per second / 1e9 of the instance's storage channel (> 0). */
  readonly bandwidthGBps: number;
  /** Fixed access latency per transfer job (µs, >= 0). */
  readonly latencyUs: number;
  /** Bytes of one KV block (tokens per block × KV bytes per token), > 0. */
  readonly blockBytes: number;
  /** Window (µs) within which a block reloaded again counts as a thrashing cycle. */
  readonly cycleWindowUs?: number;
}

export interface KVTransferRecord {
  readonly kind: 'offload' | 'reload';
  readonly from: KVTierName;
  readonly to: KVTierName;
  readonly blocks: number;
  readonly bytes: number;
  readonly startUs: number;
  readonly endUs: number;
}

/** Reload cycles seen by one allocation: blocks reloaded again within the cycle window of their previous reload. */
export interface ReloadCycleSample {
  readonly timeUs: number;
  readonly cpu: number;
  readonly storage: number;
}

export const DEFAULT_CYCLE_WINDOW_US = 1_000_000;

export class StorageTier {
  readonly lru: CpuTier;
  readonly cfg: StorageTierConfig;
  readonly records: KVTransferRecord[] = [];
  readonly cycles: ReloadCycleSample[] = [];
  private readonly bytesPerUs: number;
  private readonly cycleWindow: number;
  private clock = 0;
  private channelFree = 0;
  /** Latest end of a reload issued since the last {@link consumeWait}. */
  private readyAt = 0;
  private pendingOffloads = 0;
  private cyclesCpu = 0;
  private cyclesStorage = 0;
  /** Last reload time of each block identity reloaded from CPU or storage (forgotten when storage drops it). */
  private readonly lastReload = new Map<number, number>();
  private forgetAbove = 4096;
  offloadedBlocks = 0;
  reloadedBlocks = 0;
  lookups = 0;
  hits = 0;
  storeCount = 0;

  constructor(cfg: StorageTierConfig) {
    const bad = (what: string): never => {
      throw new RangeError(`StorageTier: ${what}`);
    };
    if (!Number.isInteger(cfg.blocks) || cfg.blocks <= 0) bad(`capacity must be a positive integer, got ${cfg.blocks}`);
    if (!(cfg.bandwidthGBps > 0) || !Number.isFinite(cfg.bandwidthGBps)) bad(`bandwidth must be finite and > 0, got ${cfg.bandwidthGBps}`);
    if (!(cfg.latencyUs >= 0) || !Number.isFinite(cfg.latencyUs)) bad(`latency must be finite and >= 0, got ${cfg.latencyUs}`);
    if (!(cfg.blockBytes > 0) || !Number.isFinite(cfg.blockBytes)) bad(`block bytes must be finite and > 0, got ${cfg.blockBytes}`);
    this.cfg = cfg;
    this.lru = new CpuTier(cfg.blocks);
    this.lru.onEvict = (h) => this.lastReload.delete(h);
    this.bytesPerUs = cfg.bandwidthGBps * 1e3;
    this.cycleWindow = cfg.cycleWindowUs ?? DEFAULT_CYCLE_WINDOW_US;
  }

  get capacity(): number {
    return this.lru.capacity;
  }

  get used(): number {
    return this.lru.used;
  }

  get evictions(): number {
    return this.lru.evictionCount;
  }

  setClock(now: number): void {
    this.clock = now;
  }

  /** Chain lookup below the CPU tier: counts the lookup and whether it hit. */
  lookup(h: number): boolean {
    this.lookups++;
    const hit = this.lru.has(h);
    if (hit) this.hits++;
    return hit;
  }

  /** A block the CPU tier evicted: written to storage unless already there (then only refreshed). */
  offload(h: number): void {
    if (this.lru.touch(h)) return;
    this.lru.store(h);
    this.storeCount++;
    this.pendingOffloads++;
  }

  /** One job on the channel for the offloads gathered since the last flush (asynchronous: nothing waits). */
  flushOffloads(): void {
    const n = this.pendingOffloads;
    if (n === 0) return;
    this.pendingOffloads = 0;
    this.offloadedBlocks += n;
    this.job('offload', 'cpu', 'storage', n);
  }

  /** A block reloaded from storage (its LRU entry refreshed); the transfer is issued by {@link issueReload}. */
  touchReloaded(h: number): void {
    this.lru.touch(h);
  }

  /** One reload job of `n` blocks storage -> GPU; the allocating step waits for its end. */
  issueReload(n: number): void {
    if (n === 0) return;
    this.reloadedBlocks += n;
    const end = this.job('reload', 'storage', 'gpu', n);
    if (end > this.readyAt) this.readyAt = end;
  }

  /** A CPU-tier transfer (timed by the reference's model, not by this channel): recorded only. */
  recordCpu(kind: 'offload' | 'reload', blocks: number, durationUs: number): void {
    if (blocks === 0) return;
    const from: KVTierName = kind === 'offload' ? 'gpu' : 'cpu';
    this.records.push({ kind, from, to: kind === 'offload' ? 'cpu' : 'gpu', blocks, bytes: blocks * this.cfg.blockBytes, startUs: this.clock, endUs: this.clock + durationUs });
  }

  /**
   * A block reloaded into the GPU from `tier`: a cycle when the same block was reloaded less than the cycle
   * window ago (it left the GPU again in between). Samples are flushed per allocation by {@link flushCycles}.
   */
  noteReload(h: number, tier: 'cpu' | 'storage'): void {
    const prev = this.lastReload.get(h);
    if (prev !== undefined && this.clock - prev < this.cycleWindow) {
      if (tier === 'cpu') this.cyclesCpu++;
      else this.cyclesStorage++;
    }
    this.lastReload.set(h, this.clock);
    if (this.lastReload.size > this.forgetAbove) this.forgetOld();
  }

  /** Entries older than the window can never make a cycle again: drop them (bounds the map's size). */
  private forgetOld(): void {
    for (const [h, t] of this.lastReload) if (this.clock - t >= this.cycleWindow) this.lastReload.delete(h);
    this.forgetAbove = Math.max(this.forgetAbove, 2 * this.lastReload.size);
  }

  flushCycles(): void {
    if (this.cyclesCpu === 0 && this.cyclesStorage === 0) return;
    this.cycles.push({ timeUs: this.clock, cpu: this.cyclesCpu, storage: this.cyclesStorage });
    this.cyclesCpu = 0;
    this.cyclesStorage = 0;
  }

  /** Ticks the current step must wait for its storage reloads (0 if none); clears them. */
  consumeWait(): number {
    const wait = this.readyAt > this.clock ? this.readyAt - this.clock : 0;
    this.readyAt = 0;
    return wait;
  }

  private job(kind: 'offload' | 'reload', from: KVTierName, to: KVTierName, n: number): number {
    const bytes = n * this.cfg.blockBytes;
    const start = Math.max(this.clock, this.channelFree);
    // Whole ticks, as every simulated duration is.
    const end = start + Math.ceil(this.cfg.latencyUs + bytes / this.bytesPerUs);
    this.channelFree = end;
    this.records.push({ kind, from, to, blocks: n, bytes, startUs: start, endUs: end });
    return end;
  }
}
