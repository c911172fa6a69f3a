/**
 * Single-tier GPU KV block cache with prefix caching (reference blis-core.md §4; `sim/kv/cache.go`): allocation,
 * release and the KVStore surface. It stands on two layers of its own state, one class each so the
 * allocate/release path calls no wrapper: block-pool.ts (per-block state in typed arrays, the intrusive free
 * list, the K3 pins) and prefix-index.ts (the hash index, its frozen views for stale routing signals, identity
 * registration, lookups and the tier's reload hook).
 *
 * Blocks do not store token contents. A block's tokens are always a contiguous run of its owner's token
 * positions (`startPos .. startPos + fill`), where position p names `inputTokens[p]` below `inputLen` and
 * `outputTokens[p - inputLen]` above it, so the tokens can be read back from the request when the block
 * fills and must be hashed. The one exception, an append to a partial block that does not continue where
 * the block left off (possible only through unusual call sequences, never from the engine), is handled by
 * materialising that block's tokens in `detached` so hashing still sees exactly what the reference stored.
 */
import { NO_HASH, hashBlock } from '../domain/block-hash.js';
import { RequestState, type Request } from '../domain/request.js';
import { BlockList } from './block-list.js';
import { FILL, HASH_HI, HASH_LO, INV_TWO32, IN_USE, NIL, REF, START } from './block-pool.js';
import { PrefixIndexedPool } from './prefix-index.js';
import type { KVStore, KVTierStats } from './types.js';

export { PRIVATE_MIN_BLOCK } from './block-pool.js';

const NO_TIER: KVTierStats = { cpuTotalBlocks: 0, cpuUsedBlocks: 0, offloads: 0, reloads: 0 };

export class BlockKVCache extends PrefixIndexedPool implements KVStore {
  readonly lazyDecodeSafe = true;

  private readonly listPool: BlockList[] = [];
  private readonly scratch: Int32Array;
  private readonly cachedOut: number[] = [];
  /** allocateGeneral's chain of identities: [0] the last block's (the next one's parent), [1] the tail's parent. */
  private readonly chainIds = new Float64Array(2);

  private hits = 0;
  private misses = 0;

  /**
   * @param corrected --semantics corrected (docs/reference-differences.md K1, E1, K3): reusing a block drops its
   *   identity's index entry only while that entry still names this block, so a newer copy of the same content
   *   stays findable; a prefix hit never covers the prompt's last token ({@link hitHoldback}); a reload passes
   *   over pinned blocks.
   * @param decodeIdentities register identities of blocks that fill during decode (the reference does); off is
   *   only for callers that know no prompt can repeat another request's output (see KVStoreConfig).
   * @param privatePrompts no request's prompt shares a full block with another's (see KVStoreConfig): a prompt
   *   block's identity then enters the index only if its request is released while queued (preempted), the one
   *   case in which a lookup (its own, at readmission) can find it. Ignored below {@link PRIVATE_MIN_BLOCK}.
   */
  constructor(totalBlocks: number, blockSize: number, corrected = false, private readonly decodeIdentities = true, privatePrompts = false) {
    super(totalBlocks, blockSize, corrected, privatePrompts);
    this.scratch = new Int32Array(blockSize);
  }

  /**
   * Owned blocks of `req`. The list rides on the request (`kvOwner`/`kvBlocks`, checked against this cache),
   * so the per-token decode allocation needs no map lookup.
   */
  private lookup(req: Request): BlockList | undefined {
    return req.kvOwner === this ? (req.kvBlocks as BlockList) : undefined;
  }

  private listFor(req: Request): BlockList {
    const list = this.listPool.pop() ?? new BlockList();
    // Room for every block the request can own (its prompt and output tokens): no regrowth while it runs.
    list.reset(Math.ceil((req.inputLen + req.outputLen) / this.blockSize));
    req.kvOwner = this;
    req.kvBlocks = list;
    return list;
  }

  getCachedBlocks(req: Request): readonly number[] {
    return this.getCachedBlocksInto(req, this.cachedOut);
  }

  // ---- allocation ------------------------------------------------------------------------------------

  allocate(req: Request, start: number, end: number, cached: readonly number[]): boolean {
    // Fast path for the commonest call of the step loop: one decode token appended to the request's partially
    // filled last block, continuing where it left off. It reads only the request's copy of its tail block (no
    // block-list or position lookups) and has the same effects as the general path.
    if (end === start + 1 && req.kvOwner === this) {
      const k = req.kvTailFill;
      const bs = this.blockSize;
      if (k > 0 && k < bs && req.kvTailStart + k === start && req.progressIndex >= req.inputLen && start - req.inputLen < req.outputLen && this.detached.size === 0) {
        const last = req.kvTail;
        this.meta[8 * last + FILL] = k + 1;
        req.kvTailFill = k + 1;
        if (k + 1 === bs && this.decodeIdentities) this.identifyHash(last, this.hashRun(req, req.kvTailParent, req.kvTailStart));
        return true;
      }
      // The other per-block decode call: a token after a full tail starts a new block (as the general path does).
      if (k === bs && req.progressIndex >= req.inputLen && start >= req.inputLen && start - req.inputLen < req.outputLen) {
        if (this.freeCnt === 0) return false;
        const parent = this.hashOf(req.kvTail);
        const b = this.takeFresh(start, 1);
        (req.kvBlocks as BlockList).push(b);
        this.setTail(req, b, start, 1, parent);
        return true;
      }
    }
    return this.allocateGeneral(req, start, end, cached);
  }

  decodeRoom(req: Request, next: number): number {
    if (req.kvOwner !== this || this.detached.size > 0) return 0;
    const k = req.kvTailFill;
    const bs = this.blockSize;
    if (k <= 0 || k >= bs || req.kvTailStart + k !== next || next < req.inputLen) return 0;
    // The token that fills the block is hashed, so it goes through allocate; output positions end at inputLen + outputLen.
    return Math.max(0, Math.min(bs - 1 - k, req.inputLen + req.outputLen - next));
  }

  commitDecodeAppends(req: Request, n: number): void {
    const k = req.kvTailFill + n;
    this.meta[8 * req.kvTail + FILL] = k;
    req.kvTailFill = k;
  }

  private setTail(req: Request, b: number, start: number, fill: number, parent: number): void {
    req.kvTail = b;
    req.kvTailStart = start;
    req.kvTailFill = fill;
    req.kvTailParent = parent;
  }

  /** Copies the last block of `req`'s list (id, start position, fill, parent) onto the request for the fast path. */
  private syncTail(req: Request, list: BlockList): void {
    const b = list.last();
    req.kvTail = b;
    req.kvTailStart = this.meta[8 * b + START] as number;
    req.kvTailFill = this.meta[8 * b + FILL] as number;
    // A full, owned block's identity cannot change while the tail is partial.
    req.kvTailParent = list.len >= 2 ? this.hashOf(list.at(list.len - 2)) : NO_HASH;
  }

  private allocateGeneral(req: Request, start: number, end: number, cached: readonly number[]): boolean {
    const bs = this.blockSize;
    const il = req.inputLen;
    // The prefill covers the prompt, and after a recompute preemption (E13) the output tokens re-prefilled with it.
    const pl = il + req.replayTokens;
    const prefill = req.progressIndex < pl;
    let list = this.lookup(req);
    // The request's copy of its last block (exact after every change to it) spares walking the block list.
    let tail = list !== undefined ? req.kvTail : NIL;
    let tailFill = list !== undefined ? req.kvTailFill : 0;
    let tailStart = list !== undefined ? req.kvTailStart : 0;
    let tailParent = list !== undefined ? req.kvTailParent : NO_HASH;
    let nTok: number;
    if (prefill) {
      if (start < 0 || end < start || end > pl) {
        throw new RangeError(`allocate: invalid input range [${start}, ${end}) for ${req.id} (inputLen ${il}, re-prefilled outputs ${req.replayTokens})`);
      }
      nTok = end - start;
      let eff = nTok;
      if (list !== undefined) {
        // Tokens that land in the partially filled last block need no new block (#492/#502).
        const spare = bs - tailFill;
        if (spare > 0 && spare < bs) eff -= Math.min(spare, eff);
      }
      const need = eff > 0 ? Math.floor((eff + bs - 1) / bs) : 0;
      let cachedOnFreeList = 0;
      for (let i = 0; i < cached.length; i++) if (this.meta[8 * (cached[i] as number) + IN_USE] === 0) cachedOnFreeList++;
      if (need + cachedOnFreeList > this.freeCnt) return false;
    } else {
      const oi = start - il;
      if (oi < 0 || oi >= req.outputLen) {
        throw new RangeError(`allocate: decode position ${start} out of range for ${req.id}`);
      }
      nTok = 1;
      if (list !== undefined) {
        if (tailFill === bs && this.freeCnt === 0) return false;
      } else if (this.freeCnt === 0) {
        return false;
      }
    }
    // The reference claims cached blocks inside its per-token loop, so an empty range claims nothing
    // (the full-prefix-hit edge case, blis-core.md §3).
    if (nTok === 0) return true;

    if (list === undefined && cached.length > 0) {
      list = this.listFor(req);
      this.claim(list, cached, 0, cached.length);
      tail = cached[cached.length - 1] as number;
      tailFill = bs;
      tailStart = this.meta[8 * tail + START] as number;
      tailParent = cached.length >= 2 ? this.hashOf(cached[cached.length - 2] as number) : NO_HASH;
    }

    let consumed = 0;
    if (list !== undefined) {
      const k = tailFill;
      if (k > 0 && k < bs) {
        consumed = Math.min(bs - k, nTok);
        this.appendToPartial(req, tail, tailParent, k, start, consumed, prefill || this.decodeIdentities);
        tailFill = k + consumed;
      }
      if (consumed === nTok) {
        this.setTail(req, tail, tailStart, tailFill, tailParent);
        return true;
      }
    }

    // The chain's identities live in a Float64Array: as loop variables merging a call's result with a typed-array
    // load, V8 kept them boxed, one or two heap numbers per prompt block.
    const ids = this.chainIds;
    ids[0] = list !== undefined ? this.hashOf(tail) : NO_HASH;
    if (list === undefined) list = this.listFor(req);
    let pos = start + consumed;
    while (consumed < nTok) {
      const cnt = Math.min(bs, nTok - consumed);
      const b = this.takeFresh(pos, cnt);
      tail = b;
      tailStart = pos;
      tailFill = cnt;
      ids[1] = ids[0];
      // Only prefill creates identities here; a block started in decode gets one only if it later fills
      // through the partial-block path above.
      if (cnt === bs && prefill) {
        // A block-aligned prompt block chained from the canonical parent has the identity the prompt's cached
        // hashes already hold (the same computation). NO_HASH is written as 0 here: the imported binding in
        // this expression made V8 box every block's identity on the heap.
        const canon = req.inputHashBlockSize === bs ? req.inputBlockHashes : null;
        const k = (pos / bs) | 0;
        if (canon !== null && pos % bs === 0 && k < canon.length && ids[0] === (k === 0 ? 0 /* NO_HASH */ : canon[k - 1])) ids[0] = canon[k] as number;
        else ids[0] = this.hashRun(req, ids[0], pos);
        const h = ids[0];
        if (this.unindexed === null) {
          this.identify(b, h | 0, (h * INV_TWO32) | 0);
        } else {
          // Private prompts: the identity is kept for the chain, and indexed only if the request is preempted.
          const m = this.meta;
          m[8 * b + HASH_LO] = h | 0;
          m[8 * b + HASH_HI] = (h * INV_TWO32) | 0;
          this.unindexed[b] = 1;
        }
      }
      list.push(b);
      pos += cnt;
      consumed += cnt;
    }
    this.setTail(req, tail, tailStart, tailFill, ids[1] as number);
    return true;
  }

  /** Takes the LRU head for `fill` new tokens from position `start`, owned once (a cache miss). */
  private takeFresh(start: number, fill: number): number {
    const b = this.takeFree();
    const m = this.meta;
    m[8 * b + FILL] = fill;
    m[8 * b + START] = start;
    m[8 * b + REF] = 1;
    m[8 * b + IN_USE] = 1;
    this.misses++;
    return b;
  }

  private claim(list: BlockList, ids: readonly number[], from: number, to: number): void {
    for (let i = from; i < to; i++) {
      const b = ids[i] as number;
      this.meta[8 * b + REF] = (this.meta[8 * b + REF] as number) + 1;
      if (this.meta[8 * b + IN_USE] === 0) {
        this.meta[8 * b + IN_USE] = 1;
        this.unlinkFree(b);
      }
      this.hits++;
      list.push(b);
    }
  }

  /**
   * Add `m` tokens at positions [start, start+m) to partial block `b` (the tail, chained from `parent`); give
   * it its identity if it fills (in decode too, unless `identify` is false).
   */
  private appendToPartial(req: Request, b: number, parent: number, k: number, start: number, m: number, identify: boolean): void {
    const bs = this.blockSize;
    const full = k + m === bs;
    let tokens = this.detached.get(b);
    if (tokens === undefined && (this.meta[8 * b + START] as number) + k === start) {
      this.meta[8 * b + FILL] = k + m;
      if (full && identify) this.identifyHash(b, this.hashRun(req, parent, this.meta[8 * b + START] as number));
      return;
    }
    if (tokens === undefined) {
      tokens = new Int32Array(bs);
      const sp = this.meta[8 * b + START] as number;
      for (let i = 0; i < k; i++) tokens[i] = tokenAt(req, sp + i);
    }
    for (let i = 0; i < m; i++) tokens[k + i] = tokenAt(req, start + i);
    this.meta[8 * b + FILL] = k + m;
    if (full) {
      this.detached.delete(b);
      if (identify) this.identifyHash(b, hashBlock(parent, tokens, 0, bs));
    } else {
      this.detached.set(b, tokens);
    }
  }

  /** Hash of the full block holding `req`'s token positions [sp, sp + blockSize), chained from `parent`. */
  private hashRun(req: Request, parent: number, sp: number): number {
    const bs = this.blockSize;
    const il = req.inputLen;
    const ep = sp + bs;
    if (ep <= il) return hashBlock(parent, req.inputTokens, sp, ep);
    if (sp >= il) return hashBlock(parent, req.outputTokens, sp - il, ep - il);
    const s = this.scratch;
    for (let p = sp; p < ep; p++) s[p - sp] = tokenAt(req, p);
    return hashBlock(parent, s, 0, bs);
  }

  release(req: Request): void {
    const list = this.lookup(req);
    if (list === undefined) return;
    // A request released while queued (preempted, or moved by a drain) may be admitted again and look up its own
    // prompt blocks: with private prompts they are registered now, as the reference registered them at allocation.
    if (this.unindexed !== null && req.state === RequestState.Queued) this.indexDeferred(list);
    req.kvOwner = null;
    req.kvBlocks = null;
    req.kvTail = -1;
    req.kvTailFill = 0;
    // Reverse order puts a sequence's tail blocks nearer the LRU head, so they are evicted first.
    for (let i = list.len - 1; i >= 0; i--) {
      const b = list.at(i);
      const rc = (this.meta[8 * b + REF] as number) - 1;
      this.meta[8 * b + REF] = rc;
      if (rc === 0) {
        this.meta[8 * b + IN_USE] = 0;
        this.appendFree(b);
      }
    }
    list.len = 0;
    this.listPool.push(list);
  }

  releaseTransferred(req: Request): void {
    const list = this.lookup(req);
    if (list === undefined) return;
    for (let i = 0; i < list.len; i++) {
      const b = list.at(i);
      const h = this.hashOf(b);
      if (this.meta[8 * b + REF] !== 1 || h === NO_HASH) continue;
      const idx = this.liveIndex(h);
      if (idx.get(h) === b) idx.delete(h);
      this.setHashField(b, NO_HASH);
    }
    this.release(req);
  }

  // ---- metrics and KVStore plumbing ------------------------------------------------------------------

  cacheHitRate(): number {
    const total = this.hits + this.misses;
    return total === 0 ? 0 : this.hits / total;
  }

  kvThrashingRate(): number { return 0; }

  consumePendingTransferLatency(): number { return 0; }

  setClock(_now: number): void {}

  mirrorToCPU(_batch: readonly Request[]): void {}

  blocksOf(req: Request): number { return this.lookup(req)?.len ?? 0; }

  tierStats(): KVTierStats {
    return NO_TIER;
  }

  // ---- tier-internal hooks (used by TieredKVCache only; not part of KVStore; the rest are in block-pool.ts
  // and prefix-index.ts) -----------------------------------------------------------------------------------

  /** Tier-internal. GPU block-level hits (claimed cached blocks) so far. */
  get cacheHits(): number { return this.hits; }

  /** Tier-internal. GPU block-level misses (freshly filled blocks) so far. */
  get cacheMisses(): number { return this.misses; }

  /** Tier-internal and tests. The live block list of `req` (do not mutate), or undefined if it owns none. */
  ownedList(req: Request): BlockList | undefined { return this.lookup(req); }

  /** Tier-internal. Append `ids[from, to)` to `req`'s blocks as cache hits (reference `commitCachedBlocks`). */
  commitCachedBlocks(req: Request, ids: readonly number[], from: number, to: number): void {
    if (from >= to) return;
    const list = this.lookup(req) ?? this.listFor(req);
    this.claim(list, ids, from, to);
    this.syncTail(req, list);
  }

  /**
   * Tier-internal (corrected semantics). Undo the last {@link commitCachedBlocks} of `count` blocks after the
   * rest of the allocation failed: the blocks go back as they were (shared ones keep their other owners,
   * unowned ones return to the free list, still hittable) and the hits they counted are withdrawn.
   */
  uncommitCachedBlocks(req: Request, count: number): void {
    const list = this.lookup(req);
    if (list === undefined || count <= 0) return;
    if (count > list.len) throw new Error(`uncommitCachedBlocks: ${req.id} owns ${list.len} blocks, cannot return ${count}`);
    for (let k = 0; k < count; k++) {
      const b = list.at(list.len - 1);
      list.len--;
      const rc = (this.meta[8 * b + REF] as number) - 1;
      this.meta[8 * b + REF] = rc;
      if (rc === 0) {
        this.meta[8 * b + IN_USE] = 0;
        this.appendFree(b);
      }
      this.hits--;
    }
    if (list.len === 0) {
      req.kvOwner = null;
      req.kvBlocks = null;
      req.kvTail = -1;
      req.kvTailFill = 0;
      this.listPool.push(list);
    } else {
      this.syncTail(req, list);
    }
  }
}

function tokenAt(req: Request, p: number): number {
  return p < req.inputLen ? (req.inputTokens[p] as number) : (req.outputTokens[p - req.inputLen] as number);
}
