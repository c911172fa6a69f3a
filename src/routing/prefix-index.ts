/**
 * The router's approximate view of each instance's prefix cache (reference blis-cluster.md §3.3): for every
 * instance, an LRU set of the chained block hashes of the requests routed there. It never asks the instances;
 * production routers (llm-d's endpoint picker) work the same way.
 *
 * Block identities come from `domain/block-hash.ts` (chained, full blocks only), which has the reference's
 * equality semantics, so match lengths — the only thing that reaches a decision — are identical.
 *
 * Two indexes fed the same blocks in the same order hold the same sets until one of them evicts. The cluster
 * keeps two such indexes when it routes with prefix-affinity and keeps ShadowKV (the JSON output's default): the
 * scorer records each routed request when it observes the decision, ShadowKV a moment later when the request is
 * delivered. {@link follow} lets the first use the second's LRUs for as long as that is provably exact (see
 * there), so a routing pays for one LRU update per block instead of two.
 */
import { HashLru } from '../engine/hash-lru.js';

/** Blocks remembered per instance: 10,000 × 16 tokens ≈ 160K tokens of prefix. */
export const DEFAULT_PREFIX_LRU_CAPACITY = 10_000;

export class PrefixCacheIndex {
  /** Per instance, the remembered hashes in recency order. */
  private readonly instances = new Map<string, HashLru>();
  /** While following: the index whose LRUs stand for this one's (plus {@link pendingHashes}). */
  private leader: PrefixCacheIndex | null = null;
  /** The index following this one, while it follows. */
  private follower: PrefixCacheIndex | null = null;
  /** A record made while following that the leader has not made yet (at most one). */
  private pendingHashes: ArrayLike<number> | null = null;
  private pendingInstance = '';

  constructor(readonly lruCapacity: number = DEFAULT_PREFIX_LRU_CAPACITY) {
    if (!Number.isInteger(lruCapacity) || lruCapacity <= 0) {
      throw new RangeError(`PrefixCacheIndex: lruCapacity must be a positive integer, got ${lruCapacity}`);
    }
  }

  /**
   * Makes this (empty) index stand on `leader`'s LRUs: valid while every record made here is the next record the
   * leader makes (same instance, same hash array) and neither would evict. A record here is held as pending until
   * the leader makes the same one; anything else — the leader recording something different, or a record that
   * could evict in either index, or a read here while a record is pending — first gives this index copies of the
   * leader's LRUs (with the pending record replayed), after which the two are independent. So the results are
   * those of two separate indexes in every case. Only two empty, unlinked indexes can be linked; returns whether
   * they were.
   */
  follow(leader: PrefixCacheIndex): boolean {
    const free = (x: PrefixCacheIndex): boolean => x.instances.size === 0 && x.leader === null && x.follower === null;
    if (leader === this || !free(this) || !free(leader)) return false;
    this.leader = leader;
    leader.follower = this;
    return true;
  }

  /** Whether this index is still standing on its leader's LRUs (tests). */
  get following(): boolean {
    return this.leader !== null;
  }

  /**
   * How many leading blocks of `hashes` the instance is believed to hold (stops at the first miss). A lookup
   * does not refresh recency; only routing does.
   */
  matchLength(hashes: ArrayLike<number>, instanceId: string): number {
    const lru = this.lruFor(instanceId);
    if (lru === undefined) return 0;
    let matched = 0;
    while (matched < hashes.length && lru.has(hashes[matched] as number)) matched++;
    return matched;
  }

  /** Marks every block as most recently used on the instance, in order, evicting the oldest when full. */
  recordBlocks(hashes: ArrayLike<number>, instanceId: string): void {
    if (this.leader !== null) {
      if (this.pendingHashes === null) {
        this.pendingHashes = hashes;
        this.pendingInstance = instanceId;
        return;
      }
      this.detach();
    }
    const f = this.follower;
    if (f !== null) {
      const lru = this.instances.get(instanceId);
      const size = lru === undefined ? 0 : lru.size;
      const inStep = f.pendingHashes === hashes && f.pendingInstance === instanceId && size + hashes.length <= Math.min(this.lruCapacity, f.lruCapacity);
      if (inStep) f.pendingHashes = null;
      else f.detach();
    }
    let lru = this.instances.get(instanceId);
    if (lru === undefined) {
      lru = new HashLru(this.lruCapacity);
      this.instances.set(instanceId, lru);
    }
    lru.touchAll(hashes);
  }

  /** Blocks currently remembered for the instance. */
  instanceBlockCount(instanceId: string): number {
    return this.lruFor(instanceId)?.size ?? 0;
  }

  private lruFor(instanceId: string): HashLru | undefined {
    const leader = this.leader;
    if (leader === null) return this.instances.get(instanceId);
    if (this.pendingHashes === null) return leader.instances.get(instanceId);
    this.detach();
    return this.instances.get(instanceId);
  }

  /** Stops following: copies of the leader's LRUs (which have not evicted yet) become this index's, and the pending record is made. */
  private detach(): void {
    const leader = this.leader;
    if (leader === null) return;
    this.leader = null;
    leader.follower = null;
    for (const [id, lru] of leader.instances) this.instances.set(id, lru.clone(this.lruCapacity));
    const pending = this.pendingHashes;
    this.pendingHashes = null;
    if (pending !== null) this.recordBlocks(pending, this.pendingInstance);
  }
}
