/**
 * KV-cache contract (reference blis-core.md §4, §4b). Implementations: the single-tier block cache and the
 * tiered GPU+CPU mirror. The instance engine talks only to this interface.
 */
import type { Request } from '../domain/request.js';
import type { KVTransferRecord, ReloadCycleSample } from './storage-tier.js';

export interface KVStore {
  readonly blockSize: number;
  readonly totalBlocks: number;
  /**
   * Ids of the GPU blocks holding the longest cached prefix of `req`'s full input blocks (stops at the first
   * miss; after a recompute preemption, E13, it goes on over the full blocks of its re-prefilled outputs). Pure: mutates nothing. The returned array may be reused by the next call; consume it before then.
   */
  getCachedBlocks(req: Request): readonly number[];
  /**
   * Allocate KV for `req`'s tokens [start, end) (prefill tokens while `req.progressIndex < req.inputLen +
   * req.replayTokens` — the prompt, then the outputs re-prefilled after a recompute preemption (E13) — else the
   * single output token at `start - inputLen`), claiming `cached` blocks first if the request owns none.
   * Check-then-act: on failure nothing is mutated and it returns false.
   */
  allocate(req: Request, start: number, end: number, cached: readonly number[]): boolean;
  /**
   * How many decode tokens, at positions next, next+1, ..., {@link allocate} would simply add to `req`'s
   * partially filled last block without filling it (no new block, no identity, cannot fail). The engine may
   * count such tokens instead of calling allocate for each, and report them with
   * {@link commitDecodeAppends} before the store next sees the request. 0 when not applicable.
   */
  decodeRoom(req: Request, next: number): number;
  /** Records `n` decode tokens counted against {@link decodeRoom}, as `n` allocate calls would have. */
  commitDecodeAppends(req: Request, n: number): void;
  /** Release every block `req` holds (reverse order, to the free-list tail); safe for unknown requests. */
  release(req: Request): void;
  /**
   * P/D single ownership: release `req`'s blocks after their KV moved to another instance, forgetting the
   * prefix identity of every block no other request holds (the data left; it is not a cache hit here).
   */
  releaseTransferred(req: Request): void;
  usedBlocks(): number;
  /** Block-level hits/(hits+misses) (tiered: CPU misses in the denominator); 0 with no lookups. */
  cacheHitRate(): number;
  /** Tiered: CPU evictions / mirror count; single tier: 0. */
  kvThrashingRate(): number;
  /** Read and clear the transfer latency accumulated by CPU->GPU reloads (0 for single tier). */
  consumePendingTransferLatency(): number;
  setClock(now: number): void;
  /** Tiered: mirror full hashed blocks of the batch to the CPU tier (after each step). Single tier: no-op. */
  mirrorToCPU(batch: readonly Request[]): void;
  /** Number of blocks currently owned by `req` (0 if none). */
  blocksOf(req: Request): number;
  /**
   * Number of leading full input blocks of `req` present on the GPU cache now (used by precise prefix
   * routing signals); same as `getCachedBlocks(req).length` without building the list.
   */
  cachedPrefixBlocks(req: Request): number;
  /** Freeze the prefix-cache contents for {@link snapshotPrefixBlocks} (stale routing signals). */
  takeSnapshot(): void;
  /** {@link cachedPrefixBlocks} against the contents at the last {@link takeSnapshot}. */
  snapshotPrefixBlocks(req: Request): number;
  /** CPU tier size and use, and the cumulative GPU->CPU offloads (mirrors) and CPU->GPU reloads; zeros for one tier. */
  tierStats(): KVTierStats;
  /**
   * Storage-tier mode only (docs/kv-tiers.md): bring the lower tiers' blocks of a waiting request's prompt
   * prefix back to the GPU before admission sizes its prefill, so those hits save compute (the reference's
   * GPU+CPU model reloads inside {@link allocate}, after the compute was sized). Absent or null otherwise.
   */
  readonly prefixReload?: ((req: Request) => void) | null;
  /**
   * True when an allocation can fail only for want of free blocks (totalBlocks - usedBlocks()) and touches no
   * other state a step could observe: the step loop may then keep steady decodes lazy (running-batch.ts).
   */
  readonly lazyDecodeSafe?: boolean;
  /** Per-tier figures and transfer records when a storage tier is configured; absent or null otherwise. */
  tierReport?(): KVTierReport | null;
  /** INV-4 check: free-list length + in-use count == total, and the free counter matches. Returns an error text or null. */
  checkConservation(): string | null;
}

export interface KVTierStats {
  readonly cpuTotalBlocks: number;
  readonly cpuUsedBlocks: number;
  readonly offloads: number;
  readonly reloads: number;
  /** Storage tier (present only when one is configured): size, use, blocks written CPU->storage and read back. */
  readonly storageTotalBlocks?: number;
  readonly storageUsedBlocks?: number;
  readonly storageOffloads?: number;
  readonly storageReloads?: number;
}

/** One tier's figures: a lookup is a prefix block sought there after missing every tier above. */
export interface KVTierFigures {
  readonly capacityBlocks: number;
  readonly usedBlocks: number;
  readonly lookups: number;
  readonly hits: number;
  readonly stores?: number;
  readonly evictions?: number;
}

export interface KVTierReport {
  readonly gpu: KVTierFigures;
  readonly cpu: KVTierFigures;
  readonly storage: KVTierFigures;
  readonly gpuToCpuBlocks: number;
  readonly cpuToGpuBlocks: number;
  readonly cpuToStorageBlocks: number;
  readonly storageToGpuBlocks: number;
  readonly blockBytes: number;
  readonly transfers: readonly KVTransferRecord[];
  readonly cycles: readonly ReloadCycleSample[];
}
