/**
 * KV-cache layer entry point: picks the single-tier cache or the GPU+CPU tiered cache from the config
 * (tiered iff `cpuBlocks > 0`, as the reference's `NewKVStore` does).
 */
import { BlockKVCache } from './block-cache.js';
import { TieredKVCache } from './tiered.js';
import { StorageTier, type StorageTierConfig } from './storage-tier.js';
import type { KVStore } from './types.js';

export type { KVStore } from './types.js';
export { BlockKVCache } from './block-cache.js';
export { TieredKVCache } from './tiered.js';
export { StorageTier, type StorageTierConfig, type KVTransferRecord } from './storage-tier.js';

export interface KVStoreConfig {
  totalBlocks: number;
  blockSize: number;
  /** CPU-tier capacity in blocks; 0 disables the tier. */
  cpuBlocks: number;
  /** Tokens per tick moved CPU->GPU (the CLI calls it blocks/tick, but the reference divides the block size by it). */
  transferBandwidth: number;
  /** Fixed ticks per reloaded block. */
  transferBaseLatency: number;
  /** --semantics corrected: the KV corrections of docs/reference-differences.md (K1, K6, K7). */
  corrected?: boolean;
  /** The storage tier below the CPU tier (needs `cpuBlocks > 0`); absent/null = none (the reference's model). */
  storage?: StorageTierConfig | null;
  /**
   * Register the identity of blocks that fill during decode (default true, as the reference). A caller may
   * turn it off when no request's prompt can contain another request's output (no multi-turn sessions): then
   * no lookup can ever find such an identity and skipping it changes nothing but the work. The tiered cache
   * always keeps them (it mirrors every identified block to its CPU tier).
   */
  decodeIdentities?: boolean;
  /**
   * No request's prompt shares a full block with another request's (default false): the distribution workload
   * without a shared prefix, whose prompts are independent uniform draws. A prompt block's identity is then
   * looked up only by its own request, after a preemption, so it enters the prefix index only then (blocks of
   * at least PRIVATE_MIN_BLOCK tokens; the tiered cache ignores it). Same results, without an index insert and
   * delete per prompt block, each a cache miss in a table of the whole cache.
   */
  privatePrompts?: boolean;
}

export function createKVStore(cfg: KVStoreConfig): KVStore {
  if (cfg.cpuBlocks > 0) {
    const storage = cfg.storage ? new StorageTier(cfg.storage) : null;
    return new TieredKVCache(cfg.totalBlocks, cfg.blockSize, cfg.cpuBlocks, cfg.transferBandwidth, cfg.transferBaseLatency, cfg.corrected === true, storage);
  }
  if (cfg.storage) throw new RangeError('createKVStore: a storage tier needs a CPU tier (cpuBlocks > 0)');
  return new BlockKVCache(cfg.totalBlocks, cfg.blockSize, cfg.corrected === true, cfg.decodeIdentities ?? true, cfg.privatePrompts === true);
}
