/**
 * GPU + CPU tiered KV cache, the "vLLM v1 mirror" model (reference blis-core.md §4b; `sim/kv/tiered.go`).
 *
 * Full hashed GPU blocks of running requests are mirrored to a CPU LRU after every step. Every allocation
 * first tries to bring the next uncached input blocks back from the CPU tier (#1586: consulting it only on
 * GPU failure made hit rates depend on load), charging a transfer latency per reloaded block that the
 * engine adds to the current step.
 */
import { NO_HASH, hashBlock, inputBlockHashes } from '../domain/block-hash.js';
import type { Request } from '../domain/request.js';
import { BlockKVCache } from './block-cache.js';
import { CpuTier } from './cpu-tier.js';
import type { StorageTier } from './storage-tier.js';
import type { KVStore, KVTierReport, KVTierStats } from './types.js';

const NONE: readonly number[] = [];

export class TieredKVCache implements KVStore {
  readonly gpu: BlockKVCache;
  readonly cpu: CpuTier;
  readonly blockSize: number;
  readonly totalBlocks: number;
  private readonly transferBandwidth: number;
  private readonly baseLatency: number;
  private pendingLatency = 0;
  private cpuHits = 0;
  private cpuMisses = 0;
  private mirrors = 0;
  private cpuLookups = 0;
  /** Blocks staged into the CPU tier by storage reloads (with mirrors, every CPU store). */
  private staged = 0;
  private readonly stagedHashes: number[] = [];
  /** Separate from the GPU's lookup buffer, which may still hold the caller's `cached` argument. */
  private readonly reloadedPrefix: number[] = [];
  /** GPU block -> CPU slot it was last mirrored to; a hint, verified against the slot's identity on use. */
  private readonly slotHint: Int32Array;

  /**
   * `corrected` (--semantics corrected, docs/reference-differences.md K6/K7, and K1 on the GPU tier): reloaded
   * blocks are committed only as whole blocks inside the requested range, and handed back when the rest of the
   * allocation fails, so a waiting request never holds KV and no token is stored twice.
   */
  /** `storage`: the optional third tier (docs/kv-tiers.md); null keeps the reference's GPU+CPU model untouched. */
  constructor(gpuBlocks: number, blockSize: number, cpuBlocks: number, transferBandwidth: number, baseLatency: number, readonly corrected = false, readonly storage: StorageTier | null = null) {
    if (!(transferBandwidth > 0) || !Number.isFinite(transferBandwidth)) {
      throw new RangeError(`TieredKVCache: transfer bandwidth must be finite and > 0, got ${transferBandwidth}`);
    }
    if (!(baseLatency >= 0) || !Number.isFinite(baseLatency)) {
      throw new RangeError(`TieredKVCache: base latency must be >= 0, got ${baseLatency}`);
    }
    this.gpu = new BlockKVCache(gpuBlocks, blockSize, corrected);
    this.cpu = new CpuTier(cpuBlocks);
    this.slotHint = new Int32Array(gpuBlocks).fill(-1);
    this.blockSize = blockSize;
    this.totalBlocks = gpuBlocks;
    this.transferBandwidth = transferBandwidth;
    this.baseLatency = baseLatency;
    if (storage !== null) this.cpu.onEvict = (h) => storage.offload(h);
    // K8 (corrected): as vLLM's KV connector reports external hits to the scheduler, lower-tier blocks come back
    // before admission sizes the prefill, so a CPU hit saves compute. The reference reloads only inside allocate.
    this.prefixReload = storage === null && !corrected ? null : (req) => this.reloadAhead(req);
  }

  readonly prefixReload: ((req: Request) => void) | null;

  /** Reload the prompt's next blocks past its GPU-cached prefix (a request holding no blocks yet). */
  private reloadAhead(req: Request): void {
    const gpu = this.gpu;
    if (gpu.blocksOf(req) > 0) return;
    const cached = gpu.getCachedBlocks(req);
    const k = cached.length;
    const prev = k > 0 ? gpu.blockHash(cached[k - 1] as number) : NO_HASH;
    // K3 (corrected): the reload must not overwrite the free blocks of the prefix it extends.
    if (this.corrected && k > 0) gpu.pinFree(cached);
    this.reloadFromCPU(req, k, prev);
    if (this.corrected && k > 0) gpu.unpinFree(cached);
  }

  getCachedBlocks(req: Request): readonly number[] {
    return this.gpu.getCachedBlocks(req);
  }

  takeSnapshot(): void {
    this.gpu.takeSnapshot();
  }

  snapshotPrefixBlocks(req: Request): number {
    return this.gpu.snapshotPrefixBlocks(req);
  }

  cachedPrefixBlocks(req: Request): number {
    return this.gpu.cachedPrefixBlocks(req);
  }

  allocate(req: Request, start: number, end: number, cached: readonly number[]): boolean {
    const gpu = this.gpu;
    const bs = this.blockSize;
    // Resume the chain past whatever is already resolved on the GPU: the caller's cached prefix, or the
    // blocks the request already owns (whose last one may be partial and unhashed, seeding NO_HASH as the
    // reference does).
    let startBlock = cached.length;
    let prevHash = startBlock > 0 ? gpu.blockHash(cached[startBlock - 1] as number) : NO_HASH;
    const own = gpu.ownedList(req);
    if (own !== undefined && own.len > startBlock) {
      startBlock = own.len;
      prevHash = gpu.blockHash(own.last());
      // K2 (corrected): a partial last block has no identity yet; the chain continues from the prompt's hash for
      // that position (the reference seeds the empty hash, which matches nothing on the CPU tier).
      if (this.corrected && prevHash === NO_HASH) prevHash = chainSeed(req, bs, own.len - 1);
    }
    // K3 (corrected): the reload must not overwrite the free blocks of the prefix the caller just looked up.
    if (this.corrected && cached.length > 0) gpu.pinFree(cached);
    const reloaded = this.reloadFromCPU(req, startBlock, prevHash);
    if (this.corrected && cached.length > 0) gpu.unpinFree(cached);
    if (reloaded) {
      if (this.corrected && start % bs !== 0 && gpu.blocksOf(req) > 0) return this.allocateAfterPartial(req, start, end, cached);
      const newCached = gpu.getCachedBlocksInto(req, this.reloadedPrefix);
      const newStart = newCached.length * bs;
      if (newStart > start && this.corrected) return this.allocateWithReloaded(req, start, end, cached, newCached);
      if (newStart > start) {
        const running = gpu.blocksOf(req) > 0;
        // Ceiling division so a running request's partially filled last block is never committed twice.
        const firstUncovered = Math.floor((start + bs - 1) / bs);
        if (newStart >= end) {
          const endBlock = Math.min(Math.floor((end + bs - 1) / bs), newCached.length);
          if (running) gpu.commitCachedBlocks(req, newCached, firstUncovered, endBlock);
          else gpu.commitCachedBlocks(req, newCached, 0, endBlock);
          return true;
        }
        // Commit the reloaded prefix before allocating the tail, or the tail's pops would evict it.
        const newStartBlock = newStart / bs;
        if (running) gpu.commitCachedBlocks(req, newCached, firstUncovered, newStartBlock);
        else gpu.commitCachedBlocks(req, newCached, 0, newStartBlock);
        return gpu.allocate(req, newStart, end, newCached);
      }
      return gpu.allocate(req, start, end, cached);
    }
    const ok = gpu.allocate(req, start, end, cached);
    // K4: the reference counts every failed allocation (preemption retries, a blocked queue head each step) as
    // a miss. Corrected: no lookup missed there; every block is counted once, as a hit or a miss, when allocated.
    if (!ok && !this.corrected) this.cpuMisses++;
    return ok;
  }

  /**
   * Corrected form of the reload commit: the reloaded prefix's whole blocks inside [start, end) are committed,
   * the rest of the range (a partial last block included) is allocated as usual, and if that fails the commit is
   * undone, leaving the request as it was (the reloaded blocks stay cached on the free list).
   */
  private allocateWithReloaded(req: Request, start: number, end: number, cached: readonly number[], reloaded: readonly number[]): boolean {
    const gpu = this.gpu;
    const bs = this.blockSize;
    const running = gpu.blocksOf(req) > 0;
    // A running request whose last block is partial continues in that block; reloaded blocks cannot follow it.
    if (running && start % bs !== 0) return gpu.allocate(req, start, end, cached);
    const from = running ? start / bs : 0;
    const upTo = Math.min(reloaded.length, Math.floor(end / bs));
    if (upTo <= from || upTo * bs <= start) return gpu.allocate(req, start, end, cached);
    gpu.commitCachedBlocks(req, reloaded, from, upTo);
    const tail = upTo * bs;
    if (tail >= end || gpu.allocate(req, tail, end, NONE)) return true;
    gpu.uncommitCachedBlocks(req, upTo - from);
    return false;
  }

  /**
   * Corrected semantics (K2): a running request whose last block is partial continues with GPU copies of the
   * blocks after it (reloaded just now, or cached): the partial block is filled to its boundary, the copies
   * inside [start, end) are committed, and the rest is allocated. Everything is checked before anything changes,
   * so a failure leaves the request as it was.
   */
  private allocateAfterPartial(req: Request, start: number, end: number, cached: readonly number[]): boolean {
    const gpu = this.gpu;
    const bs = this.blockSize;
    const from = Math.ceil(start / bs);
    const upTo = Math.min(Math.floor(end / bs), Math.floor((req.inputLen - gpu.hitHoldback) / bs));
    const canon = inputBlockHashes(req, bs);
    const cont = this.reloadedPrefix;
    cont.length = 0;
    let claimedFree = 0;
    for (let i = from; i < upTo; i++) {
      const b = gpu.blockForHash(canon[i] as number);
      if (b === undefined) break;
      cont.push(b);
      if (!gpu.blockInUse(b)) claimedFree++;
    }
    if (cont.length === 0) return gpu.allocate(req, start, end, cached);
    const tail = (from + cont.length) * bs;
    if (Math.ceil((end - tail) / bs) > gpu.freeCount - claimedFree) return false;
    gpu.allocate(req, start, from * bs, NONE); // fits in the partial block, which gets its identity
    gpu.commitCachedBlocks(req, cont, 0, cont.length);
    return tail >= end || gpu.allocate(req, tail, end, NONE);
  }

  /**
   * Reload consecutive full input blocks from `startBlock` on, skipping ones already on the GPU and
   * stopping at the first CPU miss or after as many reloads as there were free blocks at the start (so a
   * reload never overwrites an earlier reload). Returns whether anything was reloaded.
   */
  private reloadFromCPU(req: Request, startBlock: number, prevHash: number): boolean {
    const bs = this.blockSize;
    // E1 (corrected): a block the prefix hit cannot use is not worth reloading.
    const n = Math.floor((req.inputLen - this.gpu.hitHoldback) / bs);
    if (startBlock >= n) return false;
    const canon = inputBlockHashes(req, bs);
    // The cached canonical chain is usable whenever the seed agrees with it; otherwise hash afresh.
    const onCanon = startBlock === 0 ? prevHash === NO_HASH : canon[startBlock - 1] === prevHash;
    const gpu = this.gpu;
    const maxReloads = gpu.reloadableCount;
    const perBlock = this.baseLatency + Math.ceil(bs / this.transferBandwidth);
    const st = this.storage;
    let reloads = 0;
    let fromStorage = 0;
    let prev = prevHash;
    for (let i = startBlock; i < n; i++) {
      const h = onCanon ? (canon[i] as number) : hashBlock(prev, req.inputTokens, i * bs, (i + 1) * bs);
      prev = h;
      if (gpu.hasHash(h)) continue;
      this.cpuLookups++;
      if (!this.cpu.has(h)) {
        if (st === null || !st.lookup(h) || reloads >= maxReloads || !gpu.installReloadedBlock(h)) break;
        st.touchReloaded(h);
        st.noteReload(h, 'storage');
        this.stagedHashes.push(h);
        fromStorage++;
        reloads++;
        continue;
      }
      if (reloads >= maxReloads) break;
      if (!gpu.installReloadedBlock(h)) break;
      this.pendingLatency += perBlock;
      this.cpu.touch(h);
      this.cpuHits++;
      reloads++;
      if (st !== null) st.noteReload(h, 'cpu');
    }
    if (st !== null && reloads > 0) {
      // Storage -> host memory -> GPU: the blocks are staged into the CPU tier as most recent, after the walk
      // so that staging cannot push the chain's later blocks out of the CPU tier while it is being read.
      const staged = this.stagedHashes;
      for (let k = 0; k < staged.length; k++) if (this.cpu.touchOrStore(staged[k] as number)) this.staged++;
      staged.length = 0;
      const fromCpu = reloads - fromStorage;
      st.recordCpu('reload', fromCpu, fromCpu * perBlock);
      st.issueReload(fromStorage);
      st.flushOffloads();
      st.flushCycles();
    }
    return reloads > 0;
  }

  /** None: the tiered path keeps one allocate call per token (its mirror reads block fills after every step). */
  decodeRoom(_req: Request, _next: number): number {
    return 0;
  }

  commitDecodeAppends(req: Request, n: number): void {
    if (n > 0) throw new Error(`TieredKVCache: ${n} decode appends committed for ${req.id} without room`);
  }

  release(req: Request): void {
    this.gpu.release(req);
  }

  /** The GPU copies leave; CPU-tier mirrors of the prefix stay (an offloaded copy is the CPU tier's own). */
  releaseTransferred(req: Request): void {
    this.gpu.releaseTransferred(req);
  }

  usedBlocks(): number {
    return this.gpu.usedBlocks();
  }

  cacheHitRate(): number {
    const hits = this.gpu.cacheHits;
    const total = hits + this.gpu.cacheMisses + this.cpuMisses;
    return total === 0 ? 0 : hits / total;
  }

  kvThrashingRate(): number {
    return this.mirrors === 0 ? 0 : this.cpu.evictionCount / this.mirrors;
  }

  consumePendingTransferLatency(): number {
    const lat = this.pendingLatency;
    this.pendingLatency = 0;
    return this.storage === null ? lat : lat + this.storage.consumeWait();
  }

  /** Reads without clearing (tests, diagnostics). */
  get pendingTransferLatency(): number {
    return this.pendingLatency;
  }

  /** No time-dependent behaviour remains in the mirror model (the reference's SetClock is a no-op too). */
  setClock(now: number): void {
    this.storage?.setClock(now);
  }

  mirrorToCPU(batch: readonly Request[]): void {
    const gpu = this.gpu;
    const cpu = this.cpu;
    const hint = this.slotHint;
    const bs = this.blockSize;
    const before = this.mirrors;
    for (let r = 0; r < batch.length; r++) {
      const list = gpu.ownedList(batch[r] as Request);
      if (list === undefined) continue;
      for (let i = 0; i < list.len; i++) {
        const b = list.at(i);
        const h = gpu.blockHash(b);
        if (h === NO_HASH || gpu.blockFill(b) < bs) continue;
        if (cpu.touchSlot(hint[b] as number, h)) continue;
        hint[b] = cpu.touchOrStoreSlot(h);
        if (cpu.lastStored) this.mirrors++;
      }
    }
    const st = this.storage;
    if (st !== null) {
      // The reference's model charges nothing for mirroring: recorded with no duration.
      st.recordCpu('offload', this.mirrors - before, 0);
      st.flushOffloads();
    }
  }

  blocksOf(req: Request): number {
    return this.gpu.blocksOf(req);
  }

  tierStats(): KVTierStats {
    const st = this.storage;
    if (st === null) return { cpuTotalBlocks: this.cpu.capacity, cpuUsedBlocks: this.cpu.used, offloads: this.mirrors, reloads: this.cpuHits };
    return {
      cpuTotalBlocks: this.cpu.capacity, cpuUsedBlocks: this.cpu.used, offloads: this.mirrors, reloads: this.cpuHits,
      storageTotalBlocks: st.capacity, storageUsedBlocks: st.used, storageOffloads: st.offloadedBlocks, storageReloads: st.reloadedBlocks,
    };
  }

  tierReport(): KVTierReport | null {
    const st = this.storage;
    if (st === null) return null;
    const gpu = this.gpu;
    return {
      gpu: { capacityBlocks: this.totalBlocks, usedBlocks: gpu.usedBlocks(), lookups: gpu.cacheHits + gpu.cacheMisses + this.cpuMisses, hits: gpu.cacheHits },
      cpu: { capacityBlocks: this.cpu.capacity, usedBlocks: this.cpu.used, lookups: this.cpuLookups, hits: this.cpuHits, stores: this.mirrors + this.staged, evictions: this.cpu.evictionCount },
      storage: { capacityBlocks: st.capacity, usedBlocks: st.used, lookups: st.lookups, hits: st.hits, stores: st.storeCount, evictions: st.evictions },
      gpuToCpuBlocks: this.mirrors,
      cpuToGpuBlocks: this.cpuHits,
      cpuToStorageBlocks: st.offloadedBlocks,
      storageToGpuBlocks: st.reloadedBlocks,
      blockBytes: st.cfg.blockBytes,
      transfers: st.records,
      cycles: st.cycles,
    };
  }

  checkConservation(): string | null {
    return this.gpu.checkConservation();
  }

  /**
   * Block conservation of the lower tiers: each LRU holds what was stored minus what it evicted, never more
   * than its capacity; storage holds exactly the blocks written back minus its evictions (it is only written
   * by CPU evictions). Returns an error text or null.
   */
  checkTierConservation(): string | null {
    const cpu = this.cpu;
    const cpuStores = this.mirrors + this.staged;
    if (cpu.used > cpu.capacity) return `CPU tier holds ${cpu.used} blocks > capacity ${cpu.capacity}`;
    if (cpu.used !== cpuStores - cpu.evictionCount) return `CPU tier holds ${cpu.used} blocks but ${cpuStores} were stored and ${cpu.evictionCount} evicted`;
    const st = this.storage;
    if (st === null) return null;
    if (st.used > st.capacity) return `storage tier holds ${st.used} blocks > capacity ${st.capacity}`;
    if (st.used !== st.storeCount - st.evictions) return `storage tier holds ${st.used} blocks but ${st.storeCount} were written and ${st.evictions} evicted`;
    if (st.storeCount > cpu.evictionCount) return `storage tier was written ${st.storeCount} blocks but the CPU tier evicted only ${cpu.evictionCount}`;
    if (st.offloadedBlocks !== st.storeCount) return `storage tier: ${st.storeCount} blocks written but ${st.offloadedBlocks} offloads issued`;
    if (st.reloadedBlocks > st.hits) return `storage tier: ${st.reloadedBlocks} reloads but only ${st.hits} lookup hits`;
    return null;
  }

  /** Blocks reloaded from the CPU tier so far. */
  get cpuHitCount(): number {
    return this.cpuHits;
  }

  /** Allocations that failed with no CPU reload to help. */
  get cpuMissCount(): number {
    return this.cpuMisses;
  }

  /** Blocks newly stored on the CPU tier by mirroring. */
  get mirrorCount(): number {
    return this.mirrors;
  }
}

/** The chain hash of `req`'s input block `i` (what a partial block there will get once full), or NO_HASH past the prompt's full blocks. */
function chainSeed(req: Request, blockSize: number, i: number): number {
  const canon = inputBlockHashes(req, blockSize);
  return i < canon.length ? (canon[i] as number) : NO_HASH;
}
