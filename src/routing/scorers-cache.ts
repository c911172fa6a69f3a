/**
 * The cache-aware scorers (reference blis-cluster.md §3.2–§3.4):
 * - prefix-affinity guesses from the router's own LRU index of what it routed where;
 * - precise-prefix-cache and no-hit-lru ask each instance's KV cache through the cluster's
 *   {@link CachedBlocksFn}, which is live or a periodic copy depending on --cache-signal-delay.
 * The two stateful ones update their memory in `observe`, which the weighted policy calls with the final
 * choice after the tie-break.
 */
import { inputBlockHashes } from '../domain/block-hash.js';
import type { Request } from '../domain/request.js';
import { DEFAULT_PREFIX_LRU_CAPACITY, PrefixCacheIndex } from './prefix-index.js';
import type { CachedBlocksFn, RoutingSnapshot, Scorer } from './types.js';

function filled(n: number, value: number): Float64Array {
  return new Float64Array(n).fill(value);
}

/**
 * Share of the request's full input blocks that the instance is believed to hold, counted from block 0.
 * A request shorter than one block scores 0 everywhere. The observer records the routed request's blocks
 * on the chosen instance; the hashes are cached on the request, so scoring and observing hash it once.
 */
export function prefixAffinityScorer(blockSize: number, lruCapacity: number = DEFAULT_PREFIX_LRU_CAPACITY): Scorer {
  if (!Number.isInteger(blockSize) || blockSize <= 0) {
    throw new RangeError(`prefix-affinity: blockSize must be a positive integer, got ${blockSize}`);
  }
  const index = new PrefixCacheIndex(lruCapacity);
  return {
    name: 'prefix-affinity',
    score(req, snapshots) {
      const hashes = inputBlockHashes(req, blockSize);
      const out = new Float64Array(snapshots.length);
      if (hashes.length === 0) return out;
      for (let i = 0; i < snapshots.length; i++) {
        out[i] = index.matchLength(hashes, (snapshots[i] as RoutingSnapshot).id) / hashes.length;
      }
      return out;
    },
    observe(req, targetId) {
      index.recordBlocks(inputBlockHashes(req, blockSize), targetId);
    },
    prefixIndex: index,
  };
}

/**
 * Min-max normalised count of cached prefix blocks per instance (more is better); all 1.0 when the counts are
 * equal, including all zero, and all 1.0 when there is no cache query at all.
 */
export function precisePrefixCacheScorer(cachedBlocks: CachedBlocksFn | null): Scorer {
  return {
    name: 'precise-prefix-cache',
    score(req, snapshots) {
      const n = snapshots.length;
      if (cachedBlocks === null) return filled(n, 1.0);
      const raw = new Float64Array(n);
      let min = Number.MAX_SAFE_INTEGER;
      let max = 0;
      for (let i = 0; i < n; i++) {
        const count = cachedBlocks((snapshots[i] as RoutingSnapshot).id, req);
        raw[i] = count;
        if (count < min) min = count;
        if (count > max) max = count;
      }
      if (max === min) return filled(n, 1.0);
      return raw.map((c) => (c - min) / (max - min));
    },
    observe: null,
  };
}

/**
 * Spreads "cold" requests (no instance holds any of their prefix) over the least recently used instances;
 * "warm" requests get a neutral 0.5 everywhere and leave the recency list alone. Without a cache query every
 * request counts as warm. Cold ranking: never-used instances first (in snapshot order), then used ones from
 * least to most recent; score = 1 − rank/(n − 1).
 */
export function noHitLruScorer(cachedBlocks: CachedBlocksFn | null): Scorer {
  /** Instance ids, most recently used first; only cold routings move them. */
  let recent: string[] = [];
  // What the last score() call decided, so the observer acts only on the request it just scored.
  let lastWarm = false;
  let lastReqId = '';

  function isWarm(req: Request, snapshots: readonly RoutingSnapshot[], query: CachedBlocksFn): boolean {
    for (const s of snapshots) if (query(s.id, req) > 0) return true;
    return false;
  }

  function coldScores(snapshots: readonly RoutingSnapshot[]): Float64Array {
    const n = snapshots.length;
    if (n <= 1) return filled(n, 1.0);
    const position = new Map<string, number>();
    snapshots.forEach((s, i) => position.set(s.id, i));
    // Forget instances that left the routable set so the list cannot grow without bound under churn.
    recent = recent.filter((id) => position.has(id));
    const used = new Set(recent);
    const out = new Float64Array(n);
    let rank = 0;
    for (let i = 0; i < n; i++) {
      if (!used.has((snapshots[i] as RoutingSnapshot).id)) out[i] = 1.0 - rank++ / (n - 1);
    }
    for (let j = recent.length - 1; j >= 0; j--) out[position.get(recent[j] as string) as number] = 1.0 - rank++ / (n - 1);
    return out;
  }

  return {
    name: 'no-hit-lru',
    score(req, snapshots) {
      if (cachedBlocks === null) {
        lastWarm = true;
        lastReqId = '';
        return filled(snapshots.length, 0.5);
      }
      lastReqId = req.id;
      lastWarm = isWarm(req, snapshots, cachedBlocks);
      return lastWarm ? filled(snapshots.length, 0.5) : coldScores(snapshots);
    },
    observe(req, targetId) {
      if (lastWarm || req.id !== lastReqId) return;
      recent = [targetId, ...recent.filter((id) => id !== targetId)];
    },
  };
}
