/**
 * The KV cache's prefix index (the middle of BlockKVCache: block-pool.ts -> prefix-index.ts -> block-cache.ts).
 *
 * Owns the identity -> block hash index, the frozen views of it kept for stale routing signals, giving a block
 * its identity (and taking a free block, which drops the identity it held), the prefix lookups, and the reload
 * of a block from a lower tier (TieredKVCache's hook). The deferred identities of private prompts are indexed
 * here too.
 */
import { NO_HASH, hashBlock, inputBlockHashes } from '../domain/block-hash.js';
import type { Request } from '../domain/request.js';
import { HashIndex } from '../engine/hash-index.js';
import type { BlockList } from './block-list.js';
import { BlockPool, FILL, HASH_HI, HASH_LO, IN_USE, INV_TWO32, NEXT, NIL, REF } from './block-pool.js';

/** Entries the identity tables hold before their first growth (HashIndex doubles past load 1/2). */
const INITIAL_ENTRIES = 8;

export abstract class PrefixIndexedPool extends BlockPool {
  /** Identity -> block. Holds at most one entry per block (an entry for h names a block whose hash is h). */
  protected readonly hashToBlock: HashIndex;
  /**
   * Input tokens a prefix hit may not cover: 0 (reference), or 1 under corrected semantics (E1), where, as in
   * vLLM v1, a hit stops before the prompt's last token so a fully cached prompt recomputes its last block and
   * claims the blocks before it, instead of claiming nothing.
   */
  readonly hitHoldback: number;

  constructor(totalBlocks: number, blockSize: number, corrected: boolean, privatePrompts: boolean) {
    super(totalBlocks, blockSize, corrected, privatePrompts);
    this.hitHoldback = corrected ? 1 : 0;
    // Sized for what is registered so far (it grows geometrically): a table sized for the whole cache up front
    // spreads a short run's few entries over megabytes, and every probe misses the CPU caches; and one sized for
    // thousands of entries up front cost each idle instance of a large cluster 128 KB (issue 27).
    this.hashToBlock = new HashIndex(Math.min(totalBlocks, INITIAL_ENTRIES));
  }

  /**
   * Take the LRU head for new content. Its old identity is dropped here, not at release, so released
   * blocks stay hittable until reused; the map entry for the old hash is deleted even if a later block with
   * the same hash has since replaced it (the reference deletes by hash, not by owner).
   */
  protected takeFree(): number {
    if (this.pristine < this.totalBlocks) {
      // A never-used block: its state is all zeros already (no fill, no identity, no owner).
      this.freeCnt--;
      const p = this.pristine++;
      if (8 * p >= this.meta.length) this.growMeta();
      return p;
    }
    const b = this.freeHead;
    if (b === NIL) throw new Error('BlockKVCache: free list empty after a passed pre-check (INV-4 violation)');
    this.unlinkFree(b);
    const m = this.meta;
    m[8 * b + FILL] = 0;
    // The identity as its two words (a double passed to the index's methods would be boxed).
    const lo = m[8 * b + HASH_LO] as number;
    const hi = m[8 * b + HASH_HI] as number;
    if (lo !== 0 || hi !== 0) {
      const u = this.unindexed;
      if (u !== null && u[b] === 1) {
        u[b] = 0; // never registered: nothing to drop
      } else if (!this.corrected || this.hashToBlock.getParts(lo, hi) === b) {
        this.noteSnapshotPresence(lo, hi);
        this.hashToBlock.deleteParts(lo, hi);
      }
      m[8 * b + HASH_LO] = 0;
      m[8 * b + HASH_HI] = 0;
    }
    if (this.detached.size > 0) this.detached.delete(b);
    return b;
  }

  // ---- frozen views for stale routing signals ----------------------------------------------------------

  /** Whether a snapshot is being maintained (after the first {@link takeSnapshot}). */
  private snapshotActive = false;
  /**
   * For each block identity registered or unregistered since the last snapshot: whether it was registered
   * at the snapshot instant. Identities absent here are unchanged, so the live index answers for them.
   */
  private readonly atSnapshot = new HashIndex(INITIAL_ENTRIES);

  /**
   * Freeze the current prefix-cache contents for {@link snapshotPrefixBlocks} (the reference copies its whole
   * hash map). Here the cost is proportional to the index changes after the snapshot, not to the table size.
   */
  takeSnapshot(): void {
    this.snapshotActive = true;
    this.atSnapshot.clear();
  }

  /** Like {@link cachedPrefixBlocks}, against the contents at the last {@link takeSnapshot}. */
  snapshotPrefixBlocks(req: Request): number {
    const hashes = inputBlockHashes(req, this.blockSize);
    const before = this.atSnapshot;
    let i = 0;
    for (; i < hashes.length; i++) {
      const h = hashes[i] as number;
      const was = before.get(h);
      if (!(was < 0 ? this.hashToBlock.has(h) : was === 1)) break;
    }
    return i;
  }

  /** The index, for changing identity `h`: first records h's snapshot-time presence. */
  protected liveIndex(h: number): HashIndex {
    this.noteSnapshotPresence(h | 0, (h * INV_TWO32) | 0);
    return this.hashToBlock;
  }

  /** {@link liveIndex}'s record, for the identity with words (lo, hi), before the caller changes it. */
  protected noteSnapshotPresence(lo: number, hi: number): void {
    if (this.snapshotActive && !this.atSnapshot.hasParts(lo, hi)) this.atSnapshot.setParts(lo, hi, this.hashToBlock.hasParts(lo, hi) ? 1 : 0);
  }

  /**
   * Gives block `b` the identity `h` and registers it. The step loop's caller passes the words instead
   * ({@link identify}): a double passed to a call V8 does not inline is boxed on the heap.
   */
  protected identifyHash(b: number, h: number): void {
    this.identify(b, h | 0, (h * INV_TWO32) | 0);
  }

  /** {@link identifyHash} with the identity's words (lo, hi) (`h | 0`, `(h / 2^32) | 0`): no boxing. */
  protected identify(b: number, lo: number, hi: number): void {
    if (this.unindexed !== null) this.unindexed[b] = 0;
    this.meta[8 * b + HASH_LO] = lo;
    this.meta[8 * b + HASH_HI] = hi;
    this.noteSnapshotPresence(lo, hi);
    this.hashToBlock.setParts(lo, hi, b);
  }

  // ---- lookups ---------------------------------------------------------------------------------------

  cachedPrefixBlocks(req: Request): number {
    const hashes = inputBlockHashes(req, this.blockSize);
    let i = 0;
    while (i < hashes.length && this.hashToBlock.has(hashes[i] as number)) i++;
    return i;
  }

  /** Tier-internal. Like {@link getCachedBlocks} but fills the caller's buffer. */
  getCachedBlocksInto(req: Request, out: number[]): number[] {
    const hashes = inputBlockHashes(req, this.blockSize);
    out.length = 0;
    // E1: with a holdback the last full block of a block-aligned prompt is never a hit.
    // E13: a re-prefill after a recompute preemption ends past the prompt (replayTokens outputs later).
    const n = Math.min(hashes.length, Math.floor((req.inputLen + req.replayTokens - this.hitHoldback) / this.blockSize));
    for (let i = 0; i < n; i++) {
      const b = this.hashToBlock.get(hashes[i] as number);
      if (b < 0) break;
      out.push(b);
    }
    if (req.replayTokens > 0 && out.length === hashes.length) this.replayHits(req, out);
    return out;
  }

  /**
   * E13: a request re-prefilling its prompt and produced output after a recompute preemption also hits the full
   * blocks past its prompt whose identities survived (its own, registered when they filled): the chain goes on
   * over positions [0, inputLen + replayTokens), holdback included, from the last input block found.
   */
  private replayHits(req: Request, out: number[]): void {
    const bs = this.blockSize;
    const end = Math.floor((req.inputLen + req.replayTokens - this.hitHoldback) / bs);
    const tokens = new Int32Array(bs);
    let parent = out.length > 0 ? this.hashOf(out[out.length - 1] as number) : NO_HASH;
    for (let k = out.length; k < end; k++) {
      for (let t = 0; t < bs; t++) {
        const pos = k * bs + t;
        tokens[t] = pos < req.inputLen ? (req.inputTokens[pos] as number) : (req.outputTokens[pos - req.inputLen] as number);
      }
      parent = hashBlock(parent, tokens, 0, bs);
      const b = this.hashToBlock.get(parent);
      if (b < 0) break;
      out.push(b);
    }
  }

  /** Tier-internal. Whether some block is registered under `h`. */
  hasHash(h: number): boolean { return this.hashToBlock.has(h); }

  /** Tier-internal. Identity of block `b` ({@link NO_HASH} if unhashed). */
  blockHash(b: number): number { return b < this.pristine ? this.hashOf(b) : NO_HASH; }

  /** Registers the deferred prompt identities of `list`'s blocks (private prompts; identify clears the flags). */
  protected indexDeferred(list: BlockList): void {
    const u = this.unindexed as Uint8Array;
    const m = this.meta;
    for (let i = 0; i < list.len; i++) {
      const b = list.at(i);
      if (u[b] !== 1) continue;
      this.identify(b, m[8 * b + HASH_LO] as number, m[8 * b + HASH_HI] as number);
    }
  }

  /**
   * Tier-internal. Overwrite the LRU head with a full block of identity `h` (content reloaded from the CPU
   * tier) and park it, unowned, at the free-list tail. Returns false if the free list is empty. Pinned blocks
   * (corrected semantics) are passed over: the first unpinned block from the head is overwritten.
   */
  installReloadedBlock(h: number): boolean {
    if (this.freeCnt === 0) return false;
    // Pinned blocks were used, so they are on the linked part of the free list, after every never-used block.
    if (this.pinnedFree > 0 && this.pristine >= this.totalBlocks) {
      const pinned = this.pinned as Uint8Array;
      let c = this.freeHead;
      while (c !== NIL && pinned[c] !== 0) c = this.meta[8 * c + NEXT] as number;
      if (c === NIL) return false;
      if (c !== this.freeHead) this.moveToFreeHead(c);
    }
    const b = this.takeFree();
    this.meta[8 * b + FILL] = this.blockSize;
    this.meta[8 * b + REF] = 0;
    this.meta[8 * b + IN_USE] = 0;
    this.identifyHash(b, h);
    this.appendFree(b);
    return true;
  }

  /** Every (hash, block) registration, in no particular order. */
  hashEntries(): [number, number][] { return this.hashToBlock.entries(); }

  /** Block id registered under `h`, or undefined. */
  blockForHash(h: number): number | undefined {
    const b = this.hashToBlock.get(h);
    return b < 0 ? undefined : b;
  }
}
