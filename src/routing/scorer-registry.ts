/**
 * Every weighted-routing scorer by name. The list of valid names is derived from this object's keys; adding a
 * scorer here is the only step needed to make it parseable, constructible and covered by the contract suite.
 */
import { DEFAULT_PREFIX_LRU_CAPACITY } from './prefix-index.js';
import { noHitLruScorer, precisePrefixCacheScorer, prefixAffinityScorer } from './scorers-cache.js';
import {
  activeRequestsScorer,
  kvUtilizationScorer,
  loadAwareScorer,
  loadBalanceScorer,
  loraAffinityScorer,
  queueDepthScorer,
  runningRequestsScorer,
  vllmDpScorer,
} from './scorers-load.js';
import type { CachedBlocksFn, Scorer } from './types.js';

/** What a scorer may need from its policy's construction. */
export interface ScorerContext {
  /** KV block size in tokens (--block-size-in-tokens); prefix-affinity hashes full blocks of this size. */
  readonly blockSize: number;
  /** Per-instance cached-prefix query; null disables the cache-aware scorers (they turn neutral). */
  readonly cachedBlocks: CachedBlocksFn | null;
  /** Router-side prefix LRU capacity per instance (default 10,000 blocks). */
  readonly prefixLruCapacity?: number;
  /**
   * --semantics corrected: scorers keep their [0, 1] contract themselves (kv-utilization clamps; the
   * reference relies on the weighted policy to clamp), and weighted treats a NaN score as 0.
   */
  readonly corrected?: boolean;
}

export const SCORERS = {
  'prefix-affinity': (ctx: ScorerContext) => prefixAffinityScorer(ctx.blockSize, ctx.prefixLruCapacity ?? DEFAULT_PREFIX_LRU_CAPACITY),
  'precise-prefix-cache': (ctx: ScorerContext) => precisePrefixCacheScorer(ctx.cachedBlocks),
  'no-hit-lru': (ctx: ScorerContext) => noHitLruScorer(ctx.cachedBlocks),
  'queue-depth': () => queueDepthScorer(),
  'kv-utilization': (ctx: ScorerContext) => kvUtilizationScorer(ctx.corrected === true),
  'load-balance': () => loadBalanceScorer(),
  'active-requests': () => activeRequestsScorer(),
  'running-requests': () => runningRequestsScorer(),
  'load-aware': () => loadAwareScorer(),
  'vllm-dp': () => vllmDpScorer(),
  'lora-affinity': () => loraAffinityScorer(),
} as const satisfies Record<string, (ctx: ScorerContext) => Scorer>;

export type ScorerName = keyof typeof SCORERS;

/** Valid scorer names, sorted (the order the reference lists them in error messages). */
export const SCORER_NAMES: readonly ScorerName[] = (Object.keys(SCORERS) as ScorerName[]).sort();

export function isScorerName(name: string): name is ScorerName {
  return Object.hasOwn(SCORERS, name);
}

export function makeScorer(name: ScorerName, ctx: ScorerContext): Scorer {
  return SCORERS[name](ctx);
}
