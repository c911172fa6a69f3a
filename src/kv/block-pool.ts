/**
 * The KV cache's per-block state and free list (the bottom of BlockKVCache: block-pool.ts -> prefix-index.ts ->
 * block-cache.ts, one class each, so the allocate/release path calls no wrapper and reads one object's fields).
 *
 * Block state lives in parallel typed arrays indexed by block id (eight int32s per block in `meta`, plus the
 * private-prompt and K3 pin flags), and the free list is an intrusive doubly linked list over those ids, so the
 * per-step allocate/release path does no object allocation. This file owns that state, the free-list links, the
 * pins a reload passes over, and the conservation check; it knows nothing of hashes beyond storing a block's
 * identity words.
 */

export const NIL = -1;
// Field offsets of a block's state in `meta` (hash: the 53-bit identity's low and high 32 bits, 0 = none).
export const REF = 0;
export const IN_USE = 1;
export const FILL = 2;
export const START = 3;
export const PREV = 4;
export const NEXT = 5;
/**
 * Smallest block size at which private prompts (constructor) apply: two independently drawn prompts share a
 * block of 8 uniform token ids (MAX_TOKEN_ID = 128,000) with probability 2^-135, while with blocks of one token
 * they share first blocks often.
 */
export const PRIVATE_MIN_BLOCK = 8;
export const HASH_LO = 6;
export const HASH_HI = 7;
export const TWO32 = 4294967296;
export const INV_TWO32 = 1 / 4294967296;
/** Blocks whose state `meta` holds before the first growth (see growMeta: it quadruples). */
export const INITIAL_META_BLOCKS = 64;

export abstract class BlockPool {
  readonly totalBlocks: number;
  readonly blockSize: number;

  /**
   * Per-block state, eight int32s per block (see REF..HASH_HI): one cache line holds two blocks' whole state,
   * so taking, filling and freeing a block touches one line of it instead of one per field.
   */
  protected meta: Int32Array;
  /**
   * The free list, in LRU order, is the never-used blocks `pristine .. totalBlocks-1` (in id order: nothing is
   * ever inserted ahead of them) followed by a linked list of released blocks (freeHead .. freeTail). Keeping
   * the never-used ones implicit means a cache touches only the memory of the blocks a run actually uses.
   */
  protected pristine = 0;
  protected freeHead = NIL;
  protected freeTail = NIL;
  protected freeCnt = 0;
  /**
   * With private prompts (constructor): 1 for a block whose prompt identity is in `meta` but not yet in the
   * index (registered only if its request is released while queued); null otherwise. Grows with `meta`.
   */
  protected unindexed: Uint8Array | null;
  /** Tokens of a partial block appended out of position order (see block-cache.ts), by block id; usually empty. */
  protected readonly detached = new Map<number, Int32Array>();
  /** Corrected semantics (K3): free blocks a reload must not overwrite (the caller's looked-up prefix); else null. */
  protected readonly pinned: Uint8Array | null;
  protected pinnedFree = 0;

  /**
   * @param corrected --semantics corrected: keeps the K3 pin flags here (the index and the cache read it too).
   * @param privatePrompts keep the per-block "identity not yet indexed" flags (see BlockKVCache).
   */
  constructor(totalBlocks: number, blockSize: number, readonly corrected: boolean, privatePrompts: boolean) {
    if (!Number.isInteger(totalBlocks) || totalBlocks <= 0) {
      throw new RangeError(`BlockKVCache: totalBlocks must be a positive integer, got ${totalBlocks}`);
    }
    if (!Number.isInteger(blockSize) || blockSize <= 0) {
      throw new RangeError(`BlockKVCache: blockSize must be a positive integer, got ${blockSize}`);
    }
    this.totalBlocks = totalBlocks;
    this.blockSize = blockSize;
    this.pinned = corrected ? new Uint8Array(totalBlocks) : null;
    // Grown as never-used blocks are first taken (takeFree): zeroing a whole large cache up front was a fifth of
    // a one-request run's cost, and a short run touches a fraction of it; and each idle instance of a large
    // cluster paid 64 KB for 2,048 blocks it never took (issue 27).
    this.meta = new Int32Array(8 * Math.min(totalBlocks, INITIAL_META_BLOCKS));
    this.freeCnt = totalBlocks;
    this.unindexed = privatePrompts && blockSize >= PRIVATE_MIN_BLOCK ? new Uint8Array(this.meta.length / 8) : null;
  }

  /**
   * Quadruples `meta` (up to the whole cache; few copies on the way to a full one); nothing reads the state of a
   * block at or past `pristine`.
   */
  protected growMeta(): void {
    const grown = new Int32Array(Math.min(4 * this.meta.length, 8 * this.totalBlocks));
    grown.set(this.meta);
    this.meta = grown;
    if (this.unindexed !== null) {
      const flags = new Uint8Array(grown.length / 8);
      flags.set(this.unindexed);
      this.unindexed = flags;
    }
  }

  protected hashOf(b: number): number {
    return (this.meta[8 * b + HASH_HI] as number) * TWO32 + ((this.meta[8 * b + HASH_LO] as number) >>> 0);
  }

  protected setHashField(b: number, h: number): void {
    if (this.unindexed !== null) this.unindexed[b] = 0;
    this.meta[8 * b + HASH_LO] = h | 0;
    this.meta[8 * b + HASH_HI] = (h * INV_TWO32) | 0;
  }

  // ---- free list -------------------------------------------------------------------------------------

  protected appendFree(b: number): void {
    this.freeCnt++;
    this.meta[8 * b + NEXT] = NIL;
    this.meta[8 * b + PREV] = this.freeTail;
    if (this.freeTail !== NIL) this.meta[8 * this.freeTail + NEXT] = b;
    else this.freeHead = b;
    this.freeTail = b;
  }

  /** Relink free block `b` as the LRU head (K3: the block a reload overwrites when the head is pinned). */
  protected moveToFreeHead(b: number): void {
    this.unlinkFree(b);
    this.freeCnt++;
    this.meta[8 * b + PREV] = NIL;
    this.meta[8 * b + NEXT] = this.freeHead;
    if (this.freeHead !== NIL) this.meta[8 * this.freeHead + PREV] = b;
    else this.freeTail = b;
    this.freeHead = b;
  }

  protected unlinkFree(b: number): void {
    this.freeCnt--;
    const p = this.meta[8 * b + PREV] as number;
    const n = this.meta[8 * b + NEXT] as number;
    if (p !== NIL) this.meta[8 * p + NEXT] = n;
    else this.freeHead = n;
    if (n !== NIL) this.meta[8 * n + PREV] = p;
    else this.freeTail = p;
    this.meta[8 * b + PREV] = NIL;
    this.meta[8 * b + NEXT] = NIL;
  }

  // ---- counts, K3 pins, conservation -----------------------------------------------------------------

  usedBlocks(): number { return this.totalBlocks - this.freeCnt; }

  /** Tier-internal. Blocks on the free list. */
  get freeCount(): number { return this.freeCnt; }

  /** Tier-internal. Number of tokens block `b` holds. */
  blockFill(b: number): number { return b < this.pristine ? (this.meta[8 * b + FILL] as number) : 0; }

  /**
   * Tier-internal (corrected semantics, K3). Pin the free blocks among `ids` (a prefix the caller looked up) so
   * PrefixIndexedPool.installReloadedBlock passes over them until {@link unpinFree}.
   */
  pinFree(ids: readonly number[]): void {
    const pinned = this.pinned as Uint8Array;
    for (let i = 0; i < ids.length; i++) {
      const b = ids[i] as number;
      if (this.meta[8 * b + IN_USE] === 0 && pinned[b] === 0) {
        pinned[b] = 1;
        this.pinnedFree++;
      }
    }
  }

  /** Tier-internal (corrected semantics, K3). Undo {@link pinFree}. */
  unpinFree(ids: readonly number[]): void {
    const pinned = this.pinned as Uint8Array;
    for (let i = 0; i < ids.length; i++) pinned[ids[i] as number] = 0;
    this.pinnedFree = 0;
  }

  /** Tier-internal. Free blocks a reload may overwrite (the free count minus pinned blocks). */
  get reloadableCount(): number { return this.freeCnt - this.pinnedFree; }

  checkConservation(): string | null {
    let freeLen = this.totalBlocks - this.pristine;
    for (let b = this.freeHead; b !== NIL && freeLen <= this.totalBlocks; b = this.meta[8 * b + NEXT] as number) freeLen++;
    let inUseCount = 0;
    for (let b = 0; b < this.pristine; b++) if (this.meta[8 * b + IN_USE] !== 0) inUseCount++;
    if (freeLen + inUseCount !== this.totalBlocks) {
      return `block conservation violated: freeList=${freeLen} + inUse=${inUseCount} != total=${this.totalBlocks}`;
    }
    if (freeLen !== this.freeCnt) return `free-count drift: counter=${this.freeCnt}, actual free list=${freeLen}`;
    return null;
  }

  // ---- inspection (tests, debugging) -----------------------------------------------------------------

  /** Block ids on the free list, head (next to be reused) first. */
  freeListOrder(): number[] {
    const out: number[] = [];
    for (let b = this.pristine; b < this.totalBlocks; b++) out.push(b);
    for (let b = this.freeHead; b !== NIL && out.length <= this.totalBlocks; b = this.meta[8 * b + NEXT] as number) out.push(b);
    return out;
  }

  blockRefCount(b: number): number { return b < this.pristine ? (this.meta[8 * b + REF] as number) : 0; }

  blockInUse(b: number): boolean { return b < this.pristine && this.meta[8 * b + IN_USE] !== 0; }
}
