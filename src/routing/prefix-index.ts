/**
 * The router's approximate view of each instance's prefix cache (reference blis-cluster.md §3.3): for every
 * instance, an LRU set of the chained block hashes of the requests routed there. It never asks the instances;
 * production routers (llm-d's endpoint picker) work the same way.
 *
 * Block identities come from `domain/block-hash.ts` (chained, full blocks only), which has the reference's
 * equality semantics, so match lengths — the only thing that reaches a decision — are identical.
 */

/** Blocks remembered per instance: 10,000 × 16 tokens ≈ 160K tokens of prefix. */
import { HashLru } from '../engine/hash-lru.js';

export const DEFAULT_PREFIX_LRU_CAPACITY = 10_000;

export class PrefixCacheIndex {
  /** Per instance, the remembered hashes in recency order. */
  private readonly instances = new Map<string, HashLru>();

  constructor(readonly lruCapacity: number = DEFAULT_PREFIX_LRU_CAPACITY) {
    if (!Number.isInteger(lruCapacity) || lruCapacity <= 0) {
      throw new RangeError(`PrefixCacheIndex: lruCapacity must be a positive integer, got ${lruCapacity}`);
    }
  }

  /**
   * How many leading blocks of `hashes` the instance is believed to hold (stops at the first miss). A lookup
   * does not refresh recency; only routing does.
   */
  matchLength(hashes: ArrayLike<number>, instanceId: string): number {
    const lru = this.instances.get(instanceId);
    if (lru === undefined) return 0;
    let matched = 0;
    while (matched < hashes.length && lru.has(hashes[matched] as number)) matched++;
    return matched;
  }

  /** Marks every block as most recently used on the instance, in order, evicting the oldest when full. */
  recordBlocks(hashes: ArrayLike<number>, instanceId: string): void {
    let lru = this.instances.get(instanceId);
    if (lru === undefined) {
      lru = new HashLru(this.lruCapacity);
      this.instances.set(instanceId, lru);
    }
    for (let i = 0; i < hashes.length; i++) lru.touch(hashes[i] as number);
  }

  /** Blocks currently remembered for the instance. */
  instanceBlockCount(instanceId: string): number {
    return this.instances.get(instanceId)?.size ?? 0;
  }
}
